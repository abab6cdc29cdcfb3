#[cfg(target_os = "linux")]
mod async_raw_scorer;
mod custom_query_scorer_equivalency;
mod test_appendable_dense_vector_storage;
mod test_appendable_multi_dense_vector_storage;
mod test_appendable_sparse_vector_storage;
mod utils;
