//! The `bench` and `eval` command groups (moved from the daemon's `commands/`).

pub mod bench;
pub mod eval;

/// The daemon's progress reporter, shared as source rather than as a crate of its own.
#[allow(dead_code)]
#[path = "../../../src/commands/progress.rs"]
mod progress;
