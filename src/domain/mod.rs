//! Domain types. Every input is parsed into one of these once, at the edge, so the service
//! layer never sees an out-of-range importance or an empty namespace.

mod content;
mod error;
mod fact_key;
mod importance;
mod memory;
mod memory_type;
mod namespace;
mod status;
mod top_k;

pub use content::Content;
pub use error::ValidationError;
pub use fact_key::FactKey;
pub use importance::Importance;
pub use memory::{Memory, MemoryId, NewMemory};
pub use memory_type::MemoryType;
pub use namespace::Namespace;
pub use status::Status;
pub use top_k::TopK;
