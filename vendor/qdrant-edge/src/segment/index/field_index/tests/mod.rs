mod histogram_i64_tests;
mod histogram_test_utils;
mod histogram_tests;
