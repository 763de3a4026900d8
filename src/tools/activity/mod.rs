//! Reading the activity timeline: `getActivityLog` and `watchActivityLog`.

pub mod get_activity_log;
pub mod watch_activity_log;
