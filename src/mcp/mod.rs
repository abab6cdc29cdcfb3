//! MCP: the tools (`server`), and the stdio ⇄ HTTP relay used when another process owns the
//! data dir (`relay`).

pub mod relay;
mod server;

pub use server::HindsightMcp;
