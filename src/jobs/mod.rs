//! Scheduled maintenance jobs. So far: each job's declarative settings (`config.rs`, from
//! `jobs/<name>.toml`). The engine and the jobs themselves arrive with the maintenance-jobs
//! issue; their run ledger is `store::RunLedger`.

pub mod config;

pub use config::{JobConfigError, JobSettings, Schedule};
