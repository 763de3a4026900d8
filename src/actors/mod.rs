//! The actors of the bridge. Each concern owns its state and is reached only through
//! the typed messages declared next to it.

pub mod activity_log;
pub mod automation;
pub mod changes;
pub mod checkpoint;
pub mod claims;
pub mod clock;
pub mod dashboard;
pub mod diagnostics;
pub mod event_stream;
pub mod extension;
#[cfg(feature = "fault-injection")]
pub mod fault;
pub mod frame_guard;
pub mod heartbeat;
pub mod http_transport;
pub mod language_servers;
pub mod messages;
pub mod orchestrator;
pub mod outbound;
pub mod rate_limit;
pub mod registry;
pub mod session;
pub mod supervise;
pub mod transport;
pub mod watcher;
pub mod writer;

#[cfg(test)]
mod module_graph;
#[cfg(test)]
mod test_support;
