//! Durable state under `<config dir>/ide/`: the activity JSONL and the checkpoints.
//! Everything here is plain blocking I/O meant to run off the actors' threads.

pub mod checkpoint;
pub mod jsonl;
