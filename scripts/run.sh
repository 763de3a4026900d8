#!/usr/bin/env bash
# Builds ide-bridge (release), links it into ~/.local/bin (or $XDG_BIN_HOME) so that
# `ide-bridge status`, `ide-bridge init` and MCP clients find it, and runs it with the
# current directory as the workspace.
# Extra arguments go to ide-bridge, e.g. scripts/run.sh --ide-name my-bridge
set -euo pipefail
workspace="$PWD"
repo="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --locked --manifest-path "$repo/Cargo.toml"
bin_dir="${XDG_BIN_HOME:-$HOME/.local/bin}"
mkdir -p "$bin_dir"
ln -sf "$repo/target/release/ide-bridge" "$bin_dir/ide-bridge"
case ":$PATH:" in
  *":$bin_dir:"*) ;;
  *) echo "ide-bridge is linked at $bin_dir/ide-bridge; add $bin_dir to your PATH to run it by name" >&2 ;;
esac
exec "$bin_dir/ide-bridge" --workspace "$workspace" "$@"
