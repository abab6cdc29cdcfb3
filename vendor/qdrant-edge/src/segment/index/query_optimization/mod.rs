pub mod optimized_filter;
pub mod payload_provider;
pub mod rescore_formula;
