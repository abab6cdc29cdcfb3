pub mod indices_tracker;
pub mod sparse_index_config;
pub mod sparse_search_telemetry;
pub mod sparse_vector_index;
