#!/usr/bin/env bash
# Runs every test of Berth on this machine: installs and starts what the tests need
# (Node 22, pnpm, the workspace, PostgreSQL), typechecks, runs tap, and ends with
# a plain "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh || exit 1
eval "$(bash scripts/services.sh)" || { echo "could not start the test services"; exit 1; }

echo "== typecheck"
if ! pnpm exec tsc -p tsconfig.json; then echo "0 passed, 1 failed"; exit 1; fi

echo "== build (the tests run the operator command from the compiled build, as start.sh does)"
if ! bash scripts/build.sh; then echo "0 passed, 1 failed"; exit 1; fi

echo "== tests"
log=$(mktemp)
pnpm exec tap --reporter=tap --jobs="${BERTH_TEST_JOBS:-2}" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# tap's closing comment is "# { total: T, pass: P, fail: F, ... }"; top-level "ok"/"not ok" lines are per test file.
read -r passed failed < <(awk '/^# \{ total:/ { p=0; f=0
    if (match($0, /pass: [0-9]+/)) p=substr($0, RSTART+6, RLENGTH-6)+0
    if (match($0, /fail: [0-9]+/)) f=substr($0, RSTART+6, RLENGTH-6)+0 }
  END { print p+0, f+0 }' "$log")
if [ "$passed" = 0 ] && [ "$failed" = 0 ]; then
  passed=$(grep -cE '^ok ' "$log"); failed=$(grep -cE '^not ok ' "$log")
fi
rm -f "$log"
[ "$rc" -ne 0 ] && [ "$failed" = 0 ] && failed=1
echo "$passed passed, $failed failed"
exit "$rc"
