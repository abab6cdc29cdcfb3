mod point_mappings_ref;
mod tracker_enum;
mod trait_def;

#[allow(dead_code)]
mod read_only_tracker_enum;

pub use point_mappings_ref::{PointMappingsGuard, PointMappingsRefEnum};
pub use tracker_enum::IdTrackerEnum;
pub use trait_def::{DELETED_POINT_VERSION, IdTracker, IdTrackerRead};
