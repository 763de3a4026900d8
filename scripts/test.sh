#!/usr/bin/env bash
# Sets up and runs every test: formatting, clippy, unit and integration tests (the real
# binary over real sockets, with fault injection), and the interop tests that drive
# the bridge with the official MCP Python SDK (installed here into .venv-test) and the
# real Claude Code CLI (installed here from npm into .npm-test).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never CARGO_INCREMENTAL=0

venv=.venv-test
if ! "$venv/bin/python" -c 'import mcp, websockets, pytest' 2>/dev/null || [ ! -x "$venv/bin/ruff" ]; then
  echo "== setting up $venv (MCP Python SDK, websockets, pytest, ruff)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/python/requirements.txt
fi

claude_cli=.npm-test/node_modules/.bin/claude
claude_version=2.1.197
if ! "$claude_cli" --version 2>/dev/null | grep -q "^$claude_version "; then
  echo "== installing the Claude Code CLI $claude_version into .npm-test"
  npm install --prefix .npm-test --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$claude_version"
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --locked --all-targets --features fault-injection -- -D warnings
echo "== cargo test"
REQUIRE_RUFF=1 cargo test --locked --features fault-injection
echo "== interop: MCP Python SDK and the Claude Code CLI"
BRIDGE_BIN="$PWD/target/debug/ide-bridge" CLAUDE_CLI="$PWD/$claude_cli" "$venv/bin/pytest" -q -p no:cacheprovider tests/python
