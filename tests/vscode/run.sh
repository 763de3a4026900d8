#!/usr/bin/env bash
# The VS Code extension in the real VS Code workbench: installs code-server (npm, cached
# in .vscode-test; the native kerberos module needs libkrb5-dev, and @vscode/ripgrep's
# download is served from Debian's rg), builds the extension and its VSIX
# (editors/vscode, `npm run package`), then runs tests/vscode with the Playwright of
# .venv-test. Needs BRIDGE_BIN and CHROMIUM (scripts/test.sh sets both).
set -euo pipefail
cd "$(dirname "$0")/../.."

code_server_version=4.100.3
cs=.vscode-test/node_modules/.bin/code-server
if ! "$cs" --version 2>/dev/null | grep -q "^$code_server_version "; then
  echo "== installing code-server $code_server_version into .vscode-test"
  if [ "$(id -u)" = 0 ]; then apt_get=(apt-get); else apt_get=(sudo apt-get); fi
  missing=()
  dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
  command -v rg >/dev/null || missing+=(ripgrep)
  if [ ${#missing[@]} -gt 0 ]; then
    "${apt_get[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null \
      || { "${apt_get[@]}" update >/dev/null && "${apt_get[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null; }
  fi
  cache=$(mktemp -d)
  # A failed install leaves neither its temporary directory nor a half-filled prefix.
  trap 'rm -rf "$cache"' EXIT
  mkdir -p "$cache/vscode-ripgrep-cache-1.15.11"
  cp "$(command -v rg)" "$cache/rg"
  tar -C "$cache" -czf "$cache/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" rg
  mkdir -p .vscode-test
  # Native modules (argon2, kerberos) whose prebuilt download is unreachable build from
  # source against the Node headers Debian ships in /usr/include/node, not ones fetched
  # from nodejs.org.
  node_headers=()
  [ -f /usr/include/node/node.h ] && node_headers=(npm_config_nodedir=/usr)
  if ! env "${node_headers[@]}" TMPDIR="$cache" npm_config_unsafe_perm=true npm_config_yes=true \
    npm install --prefix .vscode-test --no-audit --no-fund --loglevel=error "code-server@$code_server_version"; then
    rm -rf .vscode-test/node_modules/code-server
    exit 1
  fi
fi

ext=editors/vscode
stamp="$ext/node_modules/.installed-from-package-lock.json"
if ! cmp -s "$ext/package-lock.json" "$stamp" 2>/dev/null; then
  echo "== installing the extension's build tools into $ext/node_modules"
  npm ci --prefix "$ext" --no-audit --no-fund --loglevel=error
  cp "$ext/package-lock.json" "$stamp"
fi
echo "== building the extension and its VSIX"
npm run --prefix "$ext" --silent package >/dev/null

.venv-test/bin/pytest -q -p no:cacheprovider tests/vscode
