#!/usr/bin/env bash
# Starts Berth on a fresh machine: Node 22 and the workspace are installed if missing, then
# the API serves on $PORT (default 3000) with the embedded database in $BERTH_DATA_DIR (./data).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
exec node core/src/cli.ts start
