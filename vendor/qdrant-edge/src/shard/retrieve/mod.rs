pub mod record_internal;
pub mod retrieve_blocking;
