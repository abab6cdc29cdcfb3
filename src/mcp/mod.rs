//! MCP: the tools (`server`), what agents are told of them (`descriptions`, from the rules in
//! force), and the stdio ⇄ HTTP relay used when another process owns the data dir (`relay`).

pub mod descriptions;
pub mod relay;
pub mod schema;
mod server;

pub use server::HindsightMcp;
