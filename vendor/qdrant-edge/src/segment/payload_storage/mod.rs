pub mod condition_checker;
#[cfg(feature = "testing")]
pub mod in_memory_payload_storage;
#[cfg(feature = "testing")]
pub mod in_memory_payload_storage_impl;
mod memory_reporter;
pub mod mmap_payload_storage;
mod payload_storage_base;
pub mod payload_storage_enum;
pub mod query_checker;
#[allow(dead_code)]
pub mod read_only;
#[cfg(test)]
mod tests;

pub use payload_storage_base::*;
