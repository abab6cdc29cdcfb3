pub mod chucked_vector_storage;
