//! Claude tasks. Their model (states and limits, the permission rules answered over
//! stream-json, the persisted queue and history) is the automation crate's `tasks`,
//! re-exported here; this module adds what runs them: the subprocess driver.

pub use ide_bridge_automation::tasks::*;

pub mod driver;
