pub mod conditioned_counter;
pub mod counter_cell;
pub mod hardware_accumulator;
pub mod hardware_counter;
pub mod hardware_data;
pub mod iterator_hw_measurement;
pub mod referenced_counter;
