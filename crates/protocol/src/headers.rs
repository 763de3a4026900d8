//! The HTTP headers the bridge, its relay and its hook command agree on.

/// Header carrying the token on agent (Claude Code) connections.
pub const AGENT_AUTH_HEADER: &str = "x-claude-code-ide-authorization";
/// Header carrying the token on editor extension connections.
pub const EDITOR_AUTH_HEADER: &str = "x-claude-ide-extension";
/// Header an agent sends to reattach to its session.
pub const SESSION_ANCHOR_HEADER: &str = "x-claude-code-session-id";
/// Header an `ide-bridge mcp` relay sends: its parent process (the MCP client) and
/// that one's ancestors, nearest first, comma-separated.
pub const RELAY_HEADER: &str = "x-ide-bridge-relay";
/// Header `ide-bridge hook` sends: the agent's process (`$CLAUDE_PID` when the CLI sets
/// it) and the hook's parent chain, nearest first, comma-separated.
pub const CLIENT_HEADER: &str = "x-ide-bridge-client";
/// Header `ide-bridge hook` sends when it runs inside a Claude task the bridge started:
/// the task's id.
pub const TASK_HEADER: &str = "x-ide-bridge-task";
/// Header on the bridge's answer to a hook it took no notice of: why (`unknownAgent:
/// …`), for `ide-bridge hook` to say under `IDE_BRIDGE_HOOK_DEBUG`.
pub const IGNORED_HEADER: &str = "x-ide-bridge-ignored";
