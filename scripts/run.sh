#!/usr/bin/env bash
# Builds ide-bridge (release) and runs it with the current directory as the workspace.
# Extra arguments go to ide-bridge, e.g. scripts/run.sh --ide-name my-bridge
set -euo pipefail
workspace="$PWD"
repo="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --locked --manifest-path "$repo/Cargo.toml"
exec "$repo/target/release/ide-bridge" --workspace "$workspace" "$@"
