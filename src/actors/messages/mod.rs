//! Messages that cross from one actor to another, grouped by the actor that handles
//! them. An actor module imports the messages it sends (and the small handle types
//! that bundle their recipients) from here, never the actor that receives them, so
//! that the dependencies between actor modules point one way (see
//! `docs/architecture.md` and the `module_graph` test).
//!
//! Messages only the HTTP layer or tools send (status, admission, tool requests) stay
//! next to the actor that handles them.

pub mod activity;
pub mod automation;
pub mod changes;
pub mod checkpoint;
pub mod claims;
pub mod connection;
pub mod dashboard;
pub mod editor;
pub mod registry;
pub mod session;
pub mod watch;
