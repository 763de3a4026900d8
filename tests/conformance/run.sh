#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, server
# scenarios) against /mcp of the real bridge with its default limits, twice in a row
# against the same bridge: a slot the first run's clients left held would refuse the
# second run's. The suite cannot send a bearer token, so bearer_proxy.py adds it. Every
# scenario must pass except those listed in expected-failures.yml (each needs a fixture
# of the suite's own server), and a listed one that passes fails the run too.
# Then the newer suite's MCP 2026-07-28 scenarios (check_modern.py judges them: only
# checks that need the suite's fixtures may fail). Installs Node 24 (npm's `node`
# package) and both suites into tests/conformance/node_modules.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bridge=${BRIDGE_BIN:-$here/../../target/debug/ide-bridge}
stamp="$here/node_modules/.installed-from-package-lock.json"
if ! cmp -s "$here/package-lock.json" "$stamp" 2>/dev/null; then
  echo "== installing Node 24 and the MCP conformance suite into $here/node_modules"
  npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
  cp "$here/package-lock.json" "$stamp"
fi
export PATH="$here/node_modules/.bin:$PATH"

tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/workspace" "$tmp/config"
echo "hello" > "$tmp/workspace/README.md"
(cd "$tmp/workspace" && exec env HOME="$tmp" CLAUDE_CONFIG_DIR="$tmp/config" "$bridge") \
  > "$tmp/bridge.log" 2>&1 &
pids+=($!)
lock=
for _ in $(seq 300); do
  lock=$(ls "$tmp"/config/ide/*.lock 2>/dev/null | head -1 || true)
  [ -n "$lock" ] && break
  sleep 0.1
done
[ -n "$lock" ] || { echo "the bridge wrote no lock file:"; cat "$tmp/bridge.log"; exit 1; }
port=$(basename "$lock" .lock)
token=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["authToken"])' "$lock")
python3 "$here/bearer_proxy.py" "$port" "$token" "$tmp/proxy.port" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/proxy.port" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$tmp/proxy.port")/mcp"

status=0
for round in 1 2; do
  echo "== round $round: conformance server --url $url"
  if conformance server --url "$url" --expected-failures "$here/expected-failures.yml" \
    > "$tmp/round-$round.txt" 2>&1; then
    sed -n '/=== SUMMARY ===/,$p' "$tmp/round-$round.txt"
  else
    status=1
    cat "$tmp/round-$round.txt"
    echo "== the bridge's log"
    tail -50 "$tmp/bridge.log"
  fi
done
# MCP 2026-07-28: the newer suite's scenarios of that revision, the stateless ones
# included; checks it cannot run without its own fixture tools say "Not testable".
echo "== MCP 2026-07-28: conformance 0.2.0-alpha.12 --spec-version 2026-07-28"
modern="$here/node_modules/conformance-2026/dist/index.js"
for scenario in "" server-stateless caching http-header-validation sep-2164-resource-not-found; do
  args=(server --url "$url" -o "$tmp/modern")
  if [ -n "$scenario" ]; then args+=(--scenario "$scenario"); else args+=(--spec-version 2026-07-28); fi
  node "$modern" "${args[@]}" > "$tmp/modern-${scenario:-active}.txt" 2>&1 || true
done
if ! python3 "$here/check_modern.py" "$tmp/modern"; then
  status=1
  tail -50 "$tmp/bridge.log"
fi
exit $status
