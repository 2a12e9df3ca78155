// The Compose program runner with real processes: a program that fails the way the engine's
// network hook fails once is run again and its second exit stands; any other failure is not
// retried; a hook failure twice is the deployment's error.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runComposeUp } from '../src/program.ts';

const HOOK =
  'Cannot start service app: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running hook #0: error running hook: exit status 1, stdout: , stderr: level=fatal msg="no such file or directory": unknown';

/** A program that counts its runs in `runs` and fails with `message` for the first `failures` of them. */
function program(dir: string, failures: number, message: string): string[] {
  const script = `n=$(($(cat runs 2>/dev/null || echo 0) + 1)); echo $n > runs; if [ $n -le ${failures} ]; then echo "$1" >&2; exit 1; fi; echo started`;
  return ['sh', '-c', script, 'sh', message];
}

t.test('the engine network hook failing once: the command runs once more and its exit stands', async t => {
  const dir = mkdtempSync(path.join(tmpdir(), 'compose-up-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const lines: string[] = [];
  await runComposeUp(program(dir, 1, HOOK), { cwd: dir, log: l => lines.push(l) });
  t.equal(readFileSync(path.join(dir, 'runs'), 'utf8').trim(), '2');
  t.match(lines.join('\n'), /network hook failed[\s\S]*started/);
});

t.test('a failure of the file or the image is not retried', async t => {
  const dir = mkdtempSync(path.join(tmpdir(), 'compose-up-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await t.rejects(runComposeUp(program(dir, 1, 'ERROR: manifest for nope:1 not found'), { cwd: dir, log: () => {} }), /manifest for nope:1 not found/);
  t.equal(readFileSync(path.join(dir, 'runs'), 'utf8').trim(), '1');
});

t.test('the hook failing twice is the error', async t => {
  const dir = mkdtempSync(path.join(tmpdir(), 'compose-up-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await t.rejects(runComposeUp(program(dir, 2, HOOK), { cwd: dir, log: () => {} }), /error running hook #0/);
  t.equal(readFileSync(path.join(dir, 'runs'), 'utf8').trim(), '2');
});

t.test('a cancelled run is not retried', async t => {
  const dir = mkdtempSync(path.join(tmpdir(), 'compose-up-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const signal = AbortSignal.abort();
  await t.rejects(runComposeUp(program(dir, 1, HOOK), { cwd: dir, signal, log: () => {} }), /cancelled/);
});
