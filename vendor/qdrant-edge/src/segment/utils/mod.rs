pub mod fmt;
pub mod fs;
pub mod maybe_arc;
pub mod mem;
pub mod path;
pub mod scored_point_ties;
