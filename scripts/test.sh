#!/usr/bin/env bash
# Sets up and runs every test: formatting, clippy, unit and integration tests (the real
# binary over real sockets, with fault injection), and the interop tests that drive
# the bridge with the official MCP Python SDK (installed here into .venv-test).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never CARGO_INCREMENTAL=0

venv=.venv-test
if ! "$venv/bin/python" -c 'import mcp, websockets, pytest' 2>/dev/null || [ ! -x "$venv/bin/ruff" ]; then
  echo "== setting up $venv (MCP Python SDK, websockets, pytest, ruff)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/python/requirements.txt
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --locked --all-targets --features fault-injection -- -D warnings
echo "== cargo test"
REQUIRE_RUFF=1 cargo test --locked --features fault-injection
echo "== MCP Python SDK interop"
BRIDGE_BIN="$PWD/target/debug/ide-bridge" "$venv/bin/pytest" -q -p no:cacheprovider tests/python
