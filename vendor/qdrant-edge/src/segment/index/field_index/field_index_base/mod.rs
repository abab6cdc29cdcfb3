mod builder;
mod field_index;
mod field_index_read;
mod field_index_read_impl;
mod payload_field_index;
mod read_only;
mod value_indexer;

pub use builder::{FieldIndexBuilder, FieldIndexBuilderTrait};
pub use field_index::FieldIndex;
pub use field_index_read::FieldIndexRead;
pub use payload_field_index::{PayloadFieldIndex, PayloadFieldIndexRead};
pub use value_indexer::ValueIndexer;
