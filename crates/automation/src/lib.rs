//! What automation is, apart from running it: the policies read from config files
//! (events, triggers, gates, actions, templates), the events' declaration from which
//! the policy schema and docs are generated, and the Claude task model (states, limits,
//! permission rules, the persisted queue). The bridge's actors run what this decides.

pub mod automation;
pub mod config_file;
pub mod tasks;
