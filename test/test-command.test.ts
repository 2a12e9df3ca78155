// The test command itself (scripts/test.sh and its summary), run on a small fixture suite
// (test/fixtures/test-command): whatever goes wrong turns the run red and says why, and the last
// line is always the closing line "N passed, N failed, N skipped". The fixture runs skip the
// services, the typecheck and the build (BERTH_TEST_PREPARE=skip).
import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { standIns } from '@berth/core/testing';
import { repoRoot } from './helpers.ts';

const fixtures = 'test/fixtures/test-command';

interface Run {
  code: number;
  output: string;
  lines: string[];
  closing: string;
}

/** scripts/test.sh with the fixture bootstrap and `env`, outside tap's own environment (a tap run inside a tap test would report to it). */
function testCommand(args: string[], env: Record<string, string>): Promise<Run> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS|NODE_OPTIONS$|TS_NODE)/.test(k)));
  return new Promise(resolve => {
    execFile(
      'bash',
      ['scripts/test.sh', ...args],
      {
        cwd: repoRoot,
        env: { ...base, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`, BERTH_TEST_PREPARE: 'skip', BERTH_TEST_BOOTSTRAP: `${fixtures}/bootstrap-ok.sh`, BERTH_TEST_JOBS: '1', ...env },
        timeout: 120_000,
      },
      (error, stdout, stderr) => {
        const output = stdout + stderr;
        const lines = stdout.trimEnd().split('\n');
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, output, lines, closing: lines.at(-1)! });
      },
    );
  });
}

t.test('a fixture suite that passes: exit 0, each row with its time, the closing line', async t => {
  const run = await testCommand([], { BERTH_TEST_MATRIX: `${fixtures}/matrix`, BERTH_TEST_ROWS: 'default-db' });
  t.equal(run.code, 0, run.output);
  t.equal(run.closing, '2 passed, 0 failed, 0 skipped');
  t.match(run.lines.at(-3), /^default-db: 2 passed, 0 failed, 0 skipped, in \d+ s$/, 'the row line says how long the row took');
  t.notMatch(run.output, /todo\.test\.ts/, 'the file the matrix excludes did not run');
  const listed = standIns();
  for (const s of listed) t.match(run.output, `stand-in ${s.id}: ${s.instead} — ${s.why} (checked by ${s.tests.join(', ')})`, `the summary names the stand-in ${s.id}`);
  t.equal(run.lines.at(-2), `${listed.length} stand-ins ran in place of parts that cannot run here (test/stand-ins, listed above)`);
});

t.test('test/stand-ins: every line has its four fields, an id of its own and test files that exist', async t => {
  const listed = standIns();
  t.ok(listed.length >= 10, `${listed.length} stand-ins`);
  t.same(
    listed.map(s => s.id),
    [...new Set(listed.map(s => s.id))],
    'ids are unique',
  );
  for (const s of listed) {
    t.ok(s.instead && s.why, `${s.id}: what runs instead and why`);
    for (const file of s.tests) t.ok(/\.test\.ts$/.test(file) && existsSync(path.join(repoRoot, file)), `${s.id}: ${file} is a test file that exists`);
  }
  const dir = t.testdir({ 'stand-ins': 'ok  a  b  test/x.test.ts\nbroken  only two\n' });
  t.throws(() => standIns(path.join(dir, 'stand-ins')), { message: /line 2: 2 fields, not the four/ }, 'a line without its four fields is refused');
});

t.test('a bootstrap that fails stops the run with the reason', async t => {
  const run = await testCommand([], { BERTH_TEST_MATRIX: `${fixtures}/matrix`, BERTH_TEST_BOOTSTRAP: `${fixtures}/bootstrap-fails.sh` });
  t.equal(run.code, 1);
  t.equal(run.closing, '0 passed, 1 failed, 0 skipped');
  t.match(run.output, `setup failed: Node 22, pnpm or the workspace install (${fixtures}/bootstrap-fails.sh exited 1`);
  t.notMatch(run.output, 'went on after a failed step', 'nothing after the failed step ran');
  t.notMatch(run.output, '== tests', 'no row ran');
});

t.test('a matrix line that matches nothing turns the run red, naming the line', async t => {
  const run = await testCommand([], { BERTH_TEST_MATRIX: `${fixtures}/matrix-nothing`, BERTH_TEST_ROWS: 'default-db' });
  t.equal(run.code, 1);
  t.equal(run.closing, '0 passed, 1 failed, 0 skipped');
  t.match(run.output, `${fixtures}/matrix-nothing line 3 (test/nothing-*.test.ts) matches no file`);
});

t.test('a matrix exclusion without a reason turns the run red', async t => {
  const dir = t.testdir({ matrix: `${fixtures}/passes.test.ts\n!${fixtures}/todo.test.ts\n` });
  const run = await testCommand([], { BERTH_TEST_MATRIX: path.join(dir, 'matrix'), BERTH_TEST_ROWS: 'default-db' });
  t.equal(run.code, 1);
  t.equal(run.closing, '0 passed, 1 failed, 0 skipped');
  t.match(run.output, `line 2: the exclusion of ${fixtures}/todo.test.ts gives no reason`);
});

t.test('a file argument that matches nothing turns the run red, naming it', async t => {
  const run = await testCommand([`${fixtures}/passes.test.ts`, 'test/nothing-at-all.test.ts'], { BERTH_TEST_MATRIX: `${fixtures}/matrix`, BERTH_TEST_ROWS: 'external' });
  t.equal(run.code, 1);
  t.equal(run.closing, '0 passed, 1 failed, 0 skipped');
  t.match(run.output, 'no test file matches the argument test/nothing-at-all.test.ts');
});

t.test('a todo that fails is counted as failed, by name', async t => {
  const run = await testCommand([`${fixtures}/todo.test.ts`], { BERTH_TEST_MATRIX: `${fixtures}/matrix`, BERTH_TEST_ROWS: 'external' });
  t.equal(run.code, 1);
  t.equal(run.closing, '1 passed, 1 failed, 0 skipped');
  t.match(run.output, `FAILED (external) ${fixtures}/todo.test.ts > one and one are three — a todo (arithmetic to come): it failed, counted as failed`);
});

t.test("a file whose process outlives its tests fails at tap's timeout, and the summary says what held it", async t => {
  const run = await testCommand([`${fixtures}/held-open.test.ts`, '--timeout=3'], { BERTH_TEST_MATRIX: `${fixtures}/matrix`, BERTH_TEST_ROWS: 'external' });
  t.equal(run.code, 1);
  t.match(run.closing, /^1 passed, [12] failed, 0 skipped$/);
  t.match(
    run.output,
    `FAILED (external) ${fixtures}/held-open.test.ts > timeout! — expired in the file, after its tests (its process did not end); held open by Server`,
    'the expired test and the handle on the failure line',
  );
});

t.test('test/long-files: the files it starts first exist', async t => {
  const listed = readFileSync(path.join(repoRoot, 'test/long-files'), 'utf8')
    .split('\n')
    .map(l => l.replace(/#.*/, '').trim())
    .filter(Boolean);
  t.ok(listed.length >= 5, `${listed.length} files`);
  for (const f of listed) t.ok(/\.test\.ts$/.test(f) && existsSync(path.join(repoRoot, f)), `${f} is a test file that exists`);
});
