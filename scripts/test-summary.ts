// The closing lines of the test command, from tap's own results (TAP logs, one per run of the matrix):
// per run and in all, assertions passed, failed and skipped; every skip by name with its reason;
// every failure by name. A skip that is not listed in test/expected-skips counts as a failure, and
// so does a run whose TAP stream ended before tap's final counts (a crash or a kill).
// Usage: node scripts/test-summary.ts <label>:<tap's exit code>=<tap log> ...   (exit 1 when anything failed)
import { readFileSync } from 'node:fs';
import { Parser, type Result } from 'tap-parser';
import { expectedSkips, EXPECTED_SKIP } from '../core/src/testing-support.ts';

function usage(message: string): never {
  console.error(`test-summary: ${message}`);
  process.exit(2);
}

interface Run { label: string; pass: number; fail: number; skip: number; finished: boolean; skips: Result[]; failures: Result[] }

function read(label: string, file: string, rc: number): Run {
  const run: Run = { label, pass: 0, fail: 0, skip: 0, finished: false, skips: [], failures: [] };
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
      else if (!r.ok && !r.todo) failed.push(r);
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

const runs = process.argv.slice(2).map(arg => {
  const [, label, rc, file] = arg.match(/^([^:=]+):(\d+)=(.+)$/) ?? usage(`bad argument ${arg}`);
  return read(label!, file!, Number(rc));
});
const listed = expectedSkips();
let pass = 0, fail = 0, skip = 0;
for (const run of runs) {
  let unlisted = 0;
  for (const s of run.skips) {
    const reason = typeof s.skip === 'string' ? s.skip : '';
    const id = reason.startsWith(EXPECTED_SKIP) ? reason.slice(EXPECTED_SKIP.length).trim().split(':')[0]! : undefined;
    const allowed = id !== undefined && listed.has(id);
    if (!allowed) unlisted++;
    console.log(`skipped (${run.label}) ${s.fullname} — ${reason || 'no reason given'}${allowed ? '' : '  [NOT in test/expected-skips: counted as failed]'}`);
  }
  for (const f of run.failures.slice(0, 30)) console.log(`FAILED (${run.label}) ${f.fullname}`);
  if (run.failures.length > 30) console.log(`FAILED (${run.label}) … and ${run.failures.length - 30} more`);
  if (!run.finished) console.log(`FAILED (${run.label}) tap ended before its final counts (crashed or killed)`);
  const runFail = run.fail + unlisted + (run.finished ? 0 : 1);
  console.log(`${run.label}: ${run.pass} passed, ${runFail} failed, ${run.skip} skipped`);
  pass += run.pass;
  fail += runFail;
  skip += run.skip;
}
console.log(`${pass} passed, ${fail} failed, ${skip} skipped`);
process.exit(fail > 0 ? 1 : 0);
