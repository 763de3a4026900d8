//! Tools about the bridge itself.

pub mod get_bridge_status;
