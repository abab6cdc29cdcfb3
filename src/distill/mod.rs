//! The distill job's pieces: turning recurring episodic memories into semantic ones.

pub mod cluster;
pub mod draft;
pub mod drafter;
pub mod grounding;
pub mod llm;
pub mod review;
pub mod schema;
