#!/usr/bin/env bash
# Sets up and runs every test: formatting, clippy, unit and integration tests (the real
# binary over real sockets, with fault injection), and the interop tests that drive the
# bridge with clients nobody here wrote: the official MCP Python SDK 1.x over WebSocket
# (.venv-test) and 2.x over streamable HTTP (.venv-mcp2), the TypeScript SDK and the MCP
# Inspector (tests/node/node_modules), the official MCP conformance suite on Node 24
# (tests/conformance/node_modules), the real Claude Code CLI (.npm-test) with a
# scripted model API, the Neovim plugin inside real Neovim with real language servers
# (.venv-nvim), the bridge's browser page in headless Chromium (Debian's chromium,
# driven by Playwright from .venv-test), and the VS Code extension inside code-server
# (.vscode-test, editors/vscode/node_modules). Everything is installed here on first use
# and cached in those ignored directories.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never CARGO_INCREMENTAL=0
# npm: no update notices, funding or audit chatter in the output.
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

venv=.venv-test
if ! "$venv/bin/python" -c 'import mcp, websockets, pytest, playwright' 2>/dev/null || [ ! -x "$venv/bin/ruff" ]; then
  echo "== setting up $venv (MCP Python SDK, websockets, pytest, ruff, Playwright)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/python/requirements.txt
fi

venv2=.venv-mcp2
if ! "$venv2/bin/python" -c 'import importlib.metadata as m, httpx2, pytest, anyio; assert m.version("mcp").startswith("2.")' 2>/dev/null; then
  echo "== setting up $venv2 (MCP Python SDK 2.x, pytest)"
  python3 -m venv "$venv2"
  "$venv2/bin/pip" install --quiet --disable-pip-version-check -r tests/python_mcp2/requirements.txt
fi

# The browser tests use the system's Chromium; Playwright's own download is not reachable.
chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
  echo "== installing Debian's chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then apt_get=(apt-get); else apt_get=(sudo apt-get); fi
  "${apt_get[@]}" install -y --no-install-recommends chromium >/dev/null \
    || { "${apt_get[@]}" update >/dev/null && "${apt_get[@]}" install -y --no-install-recommends chromium >/dev/null; }
fi
export CHROMIUM="$chromium"

# The real Claude Code CLI, twice: the pinned version catches regressions in older
# installs, the newest is what users run (it defers MCP tools behind ToolSearch).
install_claude() { # <prefix> <version>
  if ! "$1/node_modules/.bin/claude" --version 2>/dev/null | grep -q "^$2 "; then
    echo "== installing the Claude Code CLI $2 into $1"
    npm install --prefix "$1" --no-audit --no-fund --loglevel=error --no-update-notifier \
      "@anthropic-ai/claude-code@$2"
  fi
}
claude_cli=.npm-test/node_modules/.bin/claude
install_claude .npm-test 2.1.197
claude_cli_latest=.npm-test-latest/node_modules/.bin/claude
install_claude .npm-test-latest 2.1.332

node_tests=tests/node
node_stamp="$node_tests/node_modules/.installed-from-package-lock.json"
if ! cmp -s "$node_tests/package-lock.json" "$node_stamp" 2>/dev/null; then
  echo "== installing the MCP TypeScript SDK and the MCP Inspector into $node_tests/node_modules"
  npm ci --prefix "$node_tests" --no-audit --no-fund --loglevel=error
  cp "$node_tests/package-lock.json" "$node_stamp"
fi

# Real language servers (pylsp in .venv-nvim, typescript-language-server in
# tests/nvim/node_modules): the Neovim tests use them, and so do the bridge's own
# language-server tests in the cargo stage.
tests/nvim/setup.sh

# Every stage runs even when an earlier one failed; each is reported, and one line sums
# them up at the end (the exit status is non-zero when any failed).
results=()
failures=0
started=$SECONDS
stage() { # <name> <command...>
  local name=$1 begun=$SECONDS
  shift
  echo "== $name"
  if "$@"; then
    results+=("  ok      $name ($((SECONDS - begun)) s)")
  else
    results+=("  FAILED  $name ($((SECONDS - begun)) s)")
    failures=$((failures + 1))
  fi
}

stage "cargo fmt --check" cargo fmt --all -- --check
stage "cargo clippy" cargo clippy --locked --workspace --all-targets --features fault-injection -- -D warnings
stage "cargo test (unit, and the real binary over real sockets)" \
  env REQUIRE_RUFF=1 cargo test --locked --workspace --features fault-injection
export BRIDGE_BIN="$PWD/target/debug/ide-bridge" CLAUDE_CLI="$PWD/$claude_cli" \
  CLAUDE_CLI_LATEST="$PWD/$claude_cli_latest"
stage "interop: MCP Python SDK 1.x (WebSocket) and the Claude Code CLI" \
  "$venv/bin/pytest" -q -p no:cacheprovider tests/python
stage "the browser page in headless Chromium" \
  "$venv/bin/pytest" -q -p no:cacheprovider tests/browser
stage "interop: MCP Python SDK 2.x (streamable HTTP)" \
  "$venv2/bin/pytest" -q -p no:cacheprovider tests/python_mcp2
stage "interop: the MCP TypeScript SDK and the MCP Inspector" \
  node --test "$node_tests"/*.test.mjs
stage "the official MCP conformance suite (server scenarios: the handshake revisions twice, then 2026-07-28)" tests/conformance/run.sh
stage "the Neovim plugin in real Neovim" tests/nvim/run.sh
stage "the VS Code extension in the real VS Code workbench (code-server)" tests/vscode/run.sh

echo "== summary"
printf '%s\n' "${results[@]}"
echo "scripts/test.sh: ${#results[@]} stages, $((${#results[@]} - failures)) passed, $failures failed, in $(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s"
[ "$failures" -eq 0 ]
