//! hindsight: long-term memory for AI agents that maintains itself.
//! See ARCHITECTURE.md for the map.

pub mod auth;
pub mod configuration;
pub mod distill;
pub mod domain;
pub mod embed;
pub mod http;
pub mod index;
pub mod jobs;
pub mod lexical;
pub mod lock;
pub mod mcp;
pub mod metrics;
pub mod operations;
pub mod origin;
pub mod revision;
pub mod screening;
pub mod secret;
pub mod service;
pub mod signing;
pub mod startup;
pub mod store;
pub mod telemetry;
pub mod transfer;
