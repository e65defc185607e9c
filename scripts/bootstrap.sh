#!/usr/bin/env bash
# One-time (and idempotent) set-up: .venv with cuzk and its dev tools, the native build, npm tools.
# Re-runs only the steps whose inputs changed, so the README commands stay fast after the first run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp_py=$(find pyproject.toml setup.py cuzk/native cuzk/server/proto -type f \( -name "*.toml" -o -name "*.py" -o -name "*.cpp" -o -name "*.cuh" -o -name "*.hpp" -o -name "*.proto" \) 2>/dev/null | sort | xargs cat | sha256sum | cut -c1-16)
if [ "$(cat .venv/.cuzk-stamp 2>/dev/null)" != "$stamp_py" ]; then
  echo "[bootstrap] installing Python packages and building the native core (first run: a few minutes)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[dev]"
  echo "$stamp_py" > .venv/.cuzk-stamp
fi
if [ -f package.json ]; then
  stamp_npm=$(sha256sum package.json | cut -c1-16)
  if [ "$(cat node_modules/.cuzk-stamp 2>/dev/null)" != "$stamp_npm" ]; then
    echo "[bootstrap] installing npm tools (snarkjs, circom2, circomlib, solc)"
    npm install --no-audit --no-fund --silent
    echo "$stamp_npm" > node_modules/.cuzk-stamp
  fi
fi
