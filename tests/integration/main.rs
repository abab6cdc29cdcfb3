//! The integration tests: one test binary, one module per subject.
//!
//! Each file here was its own binary until 2026-12-07. Every test binary links the whole
//! library and its dependencies (the vendored engine among them), so 30 of them spent most of a
//! warm CI build linking (4–8 s each on 2 cores); docs/testing.md has the before and after.
//! A new file here needs its `mod` line below: `architecture::every_test_file_is_compiled`
//! fails on one that has none.
//!
//! Tier: a test that needs a service is `#[ignore = "needs …: full tier"]` (docs/testing.md).

mod common;

mod architecture;
mod cli_output;
mod console;
mod console_browser;
mod deployment;
mod distill_daemon;
mod fuzz;
mod http_guard;
mod index_suite;
mod integrity;
mod jobs;
mod jobs_daemon;
mod jobs_replicas;
mod ledger_suite;
mod llm;
mod local_embedder;
mod local_llm;
mod mcp;
mod models_pull;
mod openai_embedder;
mod postgres;
mod review_e2e;
mod scopes;
mod screening;
mod service;
mod store_suite;
mod transfer;
mod updates;
mod validation;
mod write_batch;
