mod common;
mod hw_counter_test;
mod indexed_vs_plain_test;
mod search_context_tests;
