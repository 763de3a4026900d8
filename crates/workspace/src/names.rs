//! Names from a closed list (log levels, linters): the error when one is not on it.

/// A name from a closed list that is not on it; the configuration loader adds the key.
#[derive(Debug, thiserror::Error)]
#[error("{value:?} is not allowed (allowed: {allowed})")]
pub struct UnknownName {
    /// What was configured.
    pub value: String,
    /// The names accepted, comma-separated.
    pub allowed: &'static str,
}
