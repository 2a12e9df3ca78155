#!/usr/bin/env bash
# Runs every test of Berth on this machine: installs and starts what the tests need (Node 22, pnpm,
# the workspace, PostgreSQL, the Docker engine, sshd, the test images), typechecks, builds, runs tap
# in two rows of a matrix — every suite against an external PostgreSQL, then the suites that touch
# persistence (test/database-matrix) against the default database, the one Berth starts on without
# DATABASE_URL — and always ends with "N passed, N failed, N skipped" from tap's own results.
# Extra arguments are test files (or tap options) run in both rows instead of the full sets;
# BERTH_TEST_ROWS=external (or default-db) runs one row only.
set -uo pipefail
cd "$(dirname "$0")/.."
closing() { echo "$1"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

# bootstrap.sh turns on `set -e`; this script handles every failure itself, so it turns it off again.
source scripts/bootstrap.sh || closing "setup failed: Node 22, pnpm or the workspace install (see above)"
set +e

services_env=$(mktemp)
if ! bash scripts/services.sh >"$services_env"; then
  closing "the test services did not start: scripts/services.sh failed (its [services] lines above say where)"
fi
source "$services_env"; rm -f "$services_env"
[ -n "${BERTH_TEST_PG:-}" ] || closing "the test services did not start: scripts/services.sh printed no BERTH_TEST_PG"
export BERTH_TEST_PG

echo "== typecheck"
pnpm exec tsc -p tsconfig.json || closing "typecheck failed"

echo "== build (the tests run the operator command from the compiled build, as start.sh does)"
bash scripts/build.sh || closing "the production build failed"

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
rows=()
run_row() { # <label> <BERTH_TEST_DB> <files or tap args...>
  local label=$1 db=$2; shift 2
  echo "== tests: $label"
  BERTH_TEST_DB=$db pnpm exec tap --reporter=tap --jobs="${BERTH_TEST_JOBS:-2}" "$@" 2>&1 | tee "$logs/$label.tap"
  rows+=("$label:${PIPESTATUS[0]}=$logs/$label.tap")
}

want() { [ -z "${BERTH_TEST_ROWS:-}" ] || [ "$BERTH_TEST_ROWS" = "$1" ]; }
if want external; then
  run_row external external "$@"
fi
if want default-db; then
  if [ $# -gt 0 ]; then
    run_row default-db default "$@"
  else
    mapfile -t matrix < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' test/database-matrix | grep -v '^$')
    run_row default-db default "${matrix[@]}"
  fi
fi

echo "== summary"
[ ${#rows[@]} -gt 0 ] || closing "no row of the matrix ran (BERTH_TEST_ROWS=${BERTH_TEST_ROWS:-})"
summary=$(node scripts/test-summary.ts "${rows[@]}"); rc=$?
echo "$summary"
tail -1 <<<"$summary" | grep -qE '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' || closing "the summary could not be made from the TAP logs (exit $rc)"
exit "$rc"
