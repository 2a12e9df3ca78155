// The host conformance suite can fail: local hosts that break one rule each (fixtures/broken-hosts.ts)
// are run through it in a process of their own, and the checks for their rule fail.
import { execFile } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';

const run = promisify(execFile);
const fixture = path.join(import.meta.dirname, 'fixtures', 'broken-hosts.ts');
const names = ['shell-string', 'rejects-non-zero', 'drops-stdin', 'ignores-close', 'ignores-abort'];

t.test('each broken rule fails its own checks', async t => {
  const started = Date.now();
  // The shell-string host lets the shell tricks create files: their markers (removed afterwards) and,
  // as words of the joined string, files in the working directory (a directory of its own).
  t.teardown(() => {
    for (const f of readdirSync('/tmp').filter(f => f.startsWith('berth-host-conformance-'))) {
      const file = path.join('/tmp', f);
      if (statSync(file).mtimeMs >= started - 1000) rmSync(file, { force: true });
    }
  });
  const result = await run(process.execPath, [fixture], { cwd: t.testdir(), env: { ...process.env, TAP: '1' }, maxBuffer: 16 * 1024 * 1024 }).then(
    r => ({ code: 0, stdout: r.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
  );
  t.not(result.code, 0, 'the fixture process fails');
  const failures = new Map<string, string[]>();
  let current = '';
  for (const line of result.stdout.split('\n')) {
    const subtest = /^# Subtest: (.+)$/.exec(line);
    if (subtest && names.includes(subtest[1]!)) current = subtest[1]!;
    const failed = /^\s+not ok \d+ - (.*?)(?: # time=.*)?$/.exec(line);
    if (failed && current) failures.set(current, [...(failures.get(current) ?? []), failed[1]!]);
  }
  t.ok(failures.get('shell-string')?.includes('every argument arrived unchanged'), 'arguments joined into a shell string are caught');
  t.ok(failures.get('shell-string')?.includes('and none ran'), 'and so are the tricks the shell ran');
  t.ok(failures.get('rejects-non-zero')?.includes('sh exited 3'), 'a non-zero exit turned into an error is caught');
  t.ok(failures.get('drops-stdin')?.includes('stdin as a string'), 'stdin not written is caught');
  t.ok(failures.get('ignores-close')?.includes('a command after close'), 'a connection working after close is caught');
  t.ok(failures.get('ignores-close')?.includes('the engine after close'), 'its engine too');
  t.ok(failures.get('ignores-abort')?.includes('rejects with the reason'), 'an abort that does not end the command is caught');
  t.ok(failures.get('ignores-abort')?.includes('without waiting for the program'), 'and the wait for it');
  for (const name of names)
    t.notOk(
      failures.get(name)?.some(f => /^the default export|^a provider of contract|^the instance serves/.test(f)),
      `${name}: the descriptor checks pass`,
    );
});
