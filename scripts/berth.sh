#!/usr/bin/env bash
# Runs the operator command (e.g. `bash scripts/berth.sh admin create --email … --password …`) with Node 22.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
exec node core/src/cli.ts "$@"
