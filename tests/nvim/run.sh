#!/usr/bin/env bash
# Runs the Neovim plugin tests (real Neovim, pylsp, the bridge binary in BRIDGE_BIN,
# default target/debug/ide-bridge) and prints "N passed, N failed".
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
tests/nvim/setup.sh || exit 1
export BRIDGE_BIN="${BRIDGE_BIN:-$ROOT/target/debug/ide-bridge}"
out="$(mktemp)"
.venv-nvim/bin/pytest -q tests/nvim "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
last="$(grep -E '[0-9]+ (passed|failed)' "$out" | tail -1)"
rm -f "$out"
count() { grep -oE "[0-9]+ $1" <<<"$last" | grep -oE '[0-9]+' | head -1; }
passed=$(count passed)
failed=$(count failed)
errors=$(count 'errors?')
echo "${passed:-0} passed, $(( ${failed:-0} + ${errors:-0} )) failed"
exit $rc
