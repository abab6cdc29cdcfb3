pub mod common;
pub mod index;
