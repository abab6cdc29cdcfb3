//! The bench member's integration tests: one test binary (as the daemon's, in
//! `tests/integration/`), one module per subject.

mod common;

mod eval;
mod import;
mod screening;
