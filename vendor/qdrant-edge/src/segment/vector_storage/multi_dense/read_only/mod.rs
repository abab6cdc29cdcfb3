pub mod chunked_vector_storage;
