//! Claude Code's hooks: how the bridge sees and steers what agents do with the CLI's
//! own tools (Read, Edit, Write, Bash, …), which never pass through the bridge's tools.
//! `ide-bridge init` installs the hooks ([`install`]); each runs `ide-bridge hook`
//! ([`client`]), which posts the hook's input ([`input`]) to the bridge serving the
//! project; the bridge's answer ([`answer`]) may deny a tool call, add context for the
//! model, keep the agent working, or answer a permission dialog.

pub mod answer;
pub mod client;
pub mod input;
pub mod install;
pub mod shrink;
pub mod transcript;

pub use answer::HookAnswer;
pub use input::{HookEvent, HookInput, NativeAction};
