// The closing lines of the test command, from tap's own results (TAP logs, one per run of the matrix):
// per run and in all, assertions passed, failed and skipped; every skip by name with its reason;
// every failure by name; each run's time; what runs in place of a real part (test/stand-ins). A skip that is not listed in test/expected-skips counts as
// a failure, and so does a todo (tap never runs a todo test, and a todo assertion that fails is still
// a failure), and a run whose TAP stream ended before tap's final counts (a crash or a kill).
// Usage: node scripts/test-summary.ts <label>:<tap's exit code>:<seconds>=<tap log> ...   (exit 1 when anything failed)
import { readFileSync } from 'node:fs';
import { Parser, type Result } from 'tap-parser';
import { expectedSkips, standIns, EXPECTED_SKIP } from '../core/src/testing-support.ts';

function usage(message: string): never {
  console.error(`test-summary: ${message}`);
  process.exit(2);
}

interface Run {
  label: string;
  seconds: number;
  pass: number;
  fail: number;
  skip: number;
  finished: boolean;
  skips: Result[];
  todos: Result[];
  failures: Result[];
}

function read(label: string, seconds: number, file: string, rc: number): Run {
  const run: Run = { label, seconds, pass: 0, fail: 0, skip: 0, finished: false, skips: [], todos: [], failures: [] };
  const text = readFileSync(file, 'utf8');
  // tap's own closing comment counts the test points of every file: "# { total: T, pass: P, fail: F, skip: S }"
  const counts = text.match(/^# \{ total: \d+.*\}$/m)?.[0];
  if (counts) {
    const count = (key: string) => +(counts.match(new RegExp(`\\b${key}: (\\d+)`))?.[1] ?? 0);
    Object.assign(run, { finished: true, pass: count('pass'), fail: count('fail'), skip: count('skip') });
  }
  const failed: Result[] = [];
  const attach = (p: Parser) => {
    p.on('child', attach);
    p.on('assert', (r: Result) => {
      if (r.skip) run.skips.push(r);
      else if (r.todo) run.todos.push(r);
      else if (!r.ok) failed.push(r);
    });
  };
  const parser = new Parser();
  attach(parser);
  parser.end(text);
  // a failing subtest's own line repeats the failures inside it: name the innermost ones
  run.failures = failed.filter(f => !failed.some(g => g.fullname.startsWith(`${f.fullname} > `)));
  if (rc !== 0 && run.finished && run.fail === 0) {
    run.fail = 1;
    run.failures.push({ fullname: `tap exited with code ${rc} though no assertion failed` } as Result);
  }
  return run;
}

/**
 * What a failure's diagnostics say, on its line (the TAP log above it is long, and a CI excerpt may
 * show only the end): a timeout names the test it expired in and the handles that held the process
 * (tap lists them when the process answers its timeout signal); another failure its message.
 */
function detail(f: Result): string {
  const diag = (f.diag ?? {}) as { expired?: unknown; handles?: { type?: unknown; connectionKey?: unknown; remoteAddress?: unknown; remotePort?: unknown }[]; message?: unknown };
  const parts: string[] = [];
  if (typeof diag.expired === 'string') parts.push(`expired in ${diag.expired === 'TAP' ? 'the file, after its tests (its process did not end)' : diag.expired}`);
  if (Array.isArray(diag.handles)) {
    const held = diag.handles.map(h => [h.type, h.remoteAddress && `${h.remoteAddress}:${h.remotePort}`, h.connectionKey].filter(Boolean).join(' '));
    parts.push(`held open by ${held.join(', ') || 'no handle tap could see'}`);
  }
  if (!parts.length && typeof diag.message === 'string') parts.push(diag.message);
  const text = parts.join('; ').replace(/\s+/g, ' ');
  return text ? ` — ${text.length > 400 ? `${text.slice(0, 400)}…` : text}` : '';
}

const runs = process.argv.slice(2).map(arg => {
  const [, label, rc, seconds, file] = arg.match(/^([^:=]+):(\d+):(\d+)=(.+)$/) ?? usage(`bad argument ${arg}`);
  return read(label!, Number(seconds), file!, Number(rc));
});
const duration = (s: number) => (s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`);
const listed = expectedSkips();
// Not skips, but not the real part either: said beside the skips, so "0 skipped" never overstates what ran.
const standing = standIns();
for (const s of standing) console.log(`stand-in ${s.id}: ${s.instead} — ${s.why} (checked by ${s.tests.join(', ')})`);
let pass = 0,
  fail = 0,
  skip = 0;
for (const run of runs) {
  let unlisted = 0;
  for (const s of run.skips) {
    const reason = typeof s.skip === 'string' ? s.skip : '';
    const id = reason.startsWith(EXPECTED_SKIP) ? reason.slice(EXPECTED_SKIP.length).trim().split(':')[0]! : undefined;
    const allowed = id !== undefined && listed.has(id);
    if (!allowed) unlisted++;
    console.log(`skipped (${run.label}) ${s.fullname} — ${reason || 'no reason given'}${allowed ? '' : '  [NOT in test/expected-skips: counted as failed]'}`);
  }
  for (const d of run.todos) {
    const reason = typeof d.todo === 'string' && d.todo ? d.todo : 'no reason given';
    console.log(`FAILED (${run.label}) ${d.fullname} — a todo (${reason}): ${d.ok ? 'it never ran' : 'it failed'}, counted as failed`);
  }
  for (const f of run.failures.slice(0, 30)) console.log(`FAILED (${run.label}) ${f.fullname}${detail(f)}`);
  if (run.failures.length > 30) console.log(`FAILED (${run.label}) … and ${run.failures.length - 30} more`);
  if (!run.finished) console.log(`FAILED (${run.label}) tap ended before its final counts (crashed or killed)`);
  const runFail = run.fail + run.todos.length + unlisted + (run.finished ? 0 : 1);
  console.log(`${run.label}: ${run.pass} passed, ${runFail} failed, ${run.skip} skipped, in ${duration(run.seconds)}`);
  pass += run.pass;
  fail += runFail;
  skip += run.skip;
}
console.log(`${standing.length} stand-ins ran in place of parts that cannot run here (test/stand-ins, listed above)`);
console.log(`${pass} passed, ${fail} failed, ${skip} skipped`);
process.exit(fail > 0 ? 1 : 0);
