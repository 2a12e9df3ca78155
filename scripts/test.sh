#!/usr/bin/env bash
# Runs every test of Berth on this machine: installs and starts what the tests need (Node 22, pnpm,
# the workspace, PostgreSQL, the Docker engine, sshd, the test images), typechecks, lints, checks the format, builds, runs tap
# in two rows of a matrix — every suite against an external PostgreSQL, then the suites listed in
# test/database-matrix against the default database, the one Berth starts on without DATABASE_URL —
# and always ends with "N passed, N failed, N skipped" from tap's own results.
# Extra arguments are test files (or tap options, as --name=value) run in both rows instead of the
# full sets; BERTH_TEST_ROWS=external (or default-db) runs one row only.
# For the test command's own tests (test/test-command.test.ts), which run it on a fixture suite:
# BERTH_TEST_BOOTSTRAP and BERTH_TEST_MATRIX replace scripts/bootstrap.sh and test/database-matrix,
# and BERTH_TEST_PREPARE=skip skips the services, the typecheck, the lint and the build.
set -uo pipefail
shopt -s globstar
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
summarized=
# Whatever stops the run, its last line is the closing line.
trap 'rc=$?; rm -rf "$logs"; if [ -z "$summarized" ]; then echo "the test command stopped before its summary (exit $rc)"; echo "0 passed, 1 failed, 0 skipped"; exit 1; fi' EXIT
closing() { echo "$1"; echo "0 passed, 1 failed, 0 skipped"; summarized=1; exit 1; }

# The bootstrap runs in a shell of its own: bash ignores `set -e` inside a script sourced on the left
# of `||`, so a failed Node or pnpm install there would go on and fail later under a wrong reason.
bootstrap=${BERTH_TEST_BOOTSTRAP:-scripts/bootstrap.sh}
bash -c 'source "$1"; echo "$PATH" >"$2"' bootstrap "$bootstrap" "$logs/path" \
  || closing "setup failed: Node 22, pnpm or the workspace install ($bootstrap exited $?; see above)"
PATH=$(cat "$logs/path"); export PATH

# Every file argument names at least one file; tap would drop one that does not, silently.
for arg in "$@"; do
  case $arg in -*) continue ;; esac
  compgen -G "$arg" >/dev/null || closing "no test file matches the argument $arg"
done
# test/database-matrix: a line that names no file fails the run, and so does an exclusion without a reason.
matrix_file=${BERTH_TEST_MATRIX:-test/database-matrix}
matrix_out=$(node scripts/test-matrix.ts "$matrix_file") || closing "$matrix_out"
mapfile -t matrix <<<"$matrix_out"

if [ "${BERTH_TEST_PREPARE:-}" != skip ]; then
  services_env=$(mktemp)
  if ! bash scripts/services.sh >"$services_env"; then
    closing "the test services did not start: scripts/services.sh failed (its [services] lines above say where)"
  fi
  source "$services_env"; rm -f "$services_env"
  [ -n "${BERTH_TEST_PG:-}" ] || closing "the test services did not start: scripts/services.sh printed no BERTH_TEST_PG"
  export BERTH_TEST_PG

  echo "== typecheck"
  pnpm exec tsc -p tsconfig.json || closing "typecheck failed"

  echo "== lint (typescript-eslint's promise rules: pnpm run lint)"
  lint_started=$SECONDS
  pnpm run --silent lint || closing "lint failed: pnpm run lint (the problems are above)"
  echo "lint took $((SECONDS - lint_started)) s"
  echo "== format (prettier: pnpm run format writes it, .prettierrc.json)"
  pnpm run --silent format:check || closing "format check failed: the files above are not as prettier lays them out (pnpm run format)"

  echo "== build (the tests run the operator command from the compiled build, as start.sh does)"
  bash scripts/build.sh || closing "the production build failed"
fi

# tap's async-hook-domain (patches/async-hook-domain@4.0.1.patch) installs no async hook: its
# destroy hook tracked every promise of every test process and cost about a third of their CPU. An
# error thrown outside a test's own promise chain then ends its process, and the file fails.
export ASYNC_HOOK_DOMAIN_OFF=1
# tap spawns the test processes without @tapjs/processinfo and without --enable-source-maps
# (patches/@tapjs__core@4.6.0.patch, patches/@tapjs__run@4.5.10.patch): processinfo records every
# module a process loads for coverage, which this command does not collect, through a loader thread,
# and rides along in the NODE_OPTIONS of every node process a test starts; Node strips the test files'
# types in place, so their stack positions need no maps. With tap's mock plugin left out (package.json:
# no test mocks a module; its loader hooks ran every import through a thread too), a short test file
# through tap took about a fifth less CPU.
export TAP_PROCESSINFO_OFF=1
# The longest files start first (test/long-files; the pnpm patch of @tapjs/run reads it), so that no
# row ends with one long file running alone.
export TAP_FIRST=test/long-files

rows=()
# Three test files at a time on the two cores (BERTH_TEST_JOBS to change it): a test process waits
# most of its life — on the engine, its tasks, PostgreSQL — and at two the cores stood idle 10–25 %
# of the time (docs/testing.md has the figures).
run_row() { # <label> <BERTH_TEST_DB> <files or tap args...>
  local label=$1 db=$2 started=$SECONDS; shift 2
  echo "== tests: $label"
  BERTH_TEST_DB=$db pnpm exec tap --reporter=tap --jobs="${BERTH_TEST_JOBS:-3}" "$@" 2>&1 | tee "$logs/$label.tap"
  rows+=("$label:${PIPESTATUS[0]}:$((SECONDS - started))=$logs/$label.tap")
}

want() { [ -z "${BERTH_TEST_ROWS:-}" ] || [ "$BERTH_TEST_ROWS" = "$1" ]; }
if want external; then
  run_row external external "$@"
fi
if want default-db; then
  if [ $# -gt 0 ]; then
    run_row default-db default "$@"
  else
    run_row default-db default "${matrix[@]}"
  fi
fi

echo "== summary"
[ ${#rows[@]} -gt 0 ] || closing "no row of the matrix ran (BERTH_TEST_ROWS=${BERTH_TEST_ROWS:-})"
summary=$(node scripts/test-summary.ts "${rows[@]}"); rc=$?
echo "$summary"
tail -1 <<<"$summary" | grep -qE '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' || closing "the summary could not be made from the TAP logs (exit $rc)"
summarized=1
exit "$rc"
