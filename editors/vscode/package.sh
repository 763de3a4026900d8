#!/usr/bin/env bash
# Builds the VSIX from a clean clone in one command: installs the build tools (npm ci,
# from package-lock.json), type-checks, bundles, packages. Output: dist/ide-bridge.vsix
# (install it with `code --install-extension dist/ide-bridge.vsix`).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
npm run package
echo "built $(pwd)/dist/ide-bridge.vsix"
