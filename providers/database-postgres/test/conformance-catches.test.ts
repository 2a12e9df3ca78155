// The conformance suite can fail: drivers that break one rule each (fixtures/broken-drivers.ts) are
// run through it in a process of their own, and exactly the checks for their rule fail.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';

const run = promisify(execFile);
const fixture = path.join(import.meta.dirname, 'fixtures', 'broken-drivers.ts');

t.test('each broken rule fails its own checks and no others', async t => {
  const result = await run(process.execPath, [fixture], { env: { ...process.env, TAP: '1' }, maxBuffer: 16 * 1024 * 1024 }).then(
    r => ({ code: 0, stdout: r.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
  );
  t.not(result.code, 0, 'the fixture process fails');
  // The failing assertions, grouped by the broken driver's subtest.
  const failures = new Map<string, string[]>();
  let current = '';
  for (const line of result.stdout.split('\n')) {
    const subtest = /^ {4}# Subtest: (.+)$/.exec(line) ?? /^# Subtest: (.+)$/.exec(line);
    if (subtest && ['bad-kind', 'password-in-argv', 'unencoded-url', 'empty-dump'].includes(subtest[1]!)) current = subtest[1]!;
    const failed = /^\s+not ok \d+ - (.*)$/.exec(line);
    if (failed && current && !/^(postgres|Post-gres): /.test(failed[1]!) && !['bad-kind', 'password-in-argv', 'unencoded-url', 'empty-dump'].includes(failed[1]!.split(' #')[0]!)) {
      failures.set(current, [...(failures.get(current) ?? []), failed[1]!]);
    }
  }
  t.match(failures.get('bad-kind'), [/the kind is lower-case letters and digits/], 'a kind with capitals and a dash');
  t.ok(failures.get('password-in-argv')?.length, 'a password in the readiness argv');
  t.ok(
    failures.get('password-in-argv')?.every(f => /^readiness: the password .* is in no argument$/.test(f)),
    'only the argument checks of readiness fail',
  );
  t.ok(failures.get('unencoded-url')?.length, 'credentials spliced into the URL unencoded');
  t.ok(
    failures.get('unencoded-url')?.every(f => /round-trips|does not parse as a URL|the host of|the port of|the database is the path/.test(f)),
    'only the URL checks fail',
  );
  t.ok(
    failures.get('empty-dump')?.some(f => /^dump: a non-empty argument array$/.test(f)),
    'an empty dump command',
  );
  t.ok(
    failures.get('empty-dump')?.every(f => /^dump: /.test(f)),
    "only the dump's checks fail",
  );
});
