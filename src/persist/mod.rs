//! Durable state in the workspace's state directory: the activity JSONL, the
//! checkpoints, and small snapshot files (signed-in browsers, claims). Everything here
//! is plain blocking I/O meant to run off the actors' threads, or a task that does so.

pub mod checkpoint;
pub mod jsonl;
pub mod snapshot_file;
