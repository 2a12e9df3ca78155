#!/usr/bin/env bash
# Runs the operator command (e.g. `bash scripts/berth.sh admin create --email … --password …`) with Node 22.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
bash scripts/build.sh
exec node $(bash scripts/node-flags.sh) core/src/cli.js "$@"
