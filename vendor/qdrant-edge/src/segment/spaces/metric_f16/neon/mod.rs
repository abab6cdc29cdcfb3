pub mod dot;
pub mod euclid;
pub mod manhattan;
