pub mod compressed_posting_list;
pub mod inverted_index;
#[cfg(feature = "testing")]
pub mod loaders;
pub mod posting_list;
pub mod posting_list_common;
pub mod search_context;

#[cfg(test)]
mod tests;
