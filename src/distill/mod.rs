//! Distillation's algorithms, without storage or scheduling (the job in `jobs/distill/`
//! drives them; the review of what they draft is `service::review`): `cluster` (episodes that
//! say the same thing), `prompt` (the template rendered for a cluster, the reply read back),
//! `schema` (the reply's types and JSON Schema), `llm` (one chat completion), `drafter` (a
//! cluster through the model, with retries and the token budget), `grounding` (is a draft
//! supported by what it cites).

pub mod cluster;
pub mod drafter;
pub mod grounding;
pub mod llm;
pub mod prompt;
pub mod schema;
