//! What ide-bridge keeps on this machine outside the workspace: the CLI's discovery lock
//! files, the per-workspace state directory, files only this user may have written, and
//! the process ancestry that tells which agent a relay or hook runs for, and how much of
//! its own binary the process keeps resident. Below the
//! bridge and the relay, above nothing but the standard library.

pub mod ancestry;
pub mod lockfile;
pub mod private_file;
pub mod resident;
pub mod state;
