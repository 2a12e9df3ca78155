// The remote command line: every argument reaches the program as written, whatever it holds,
// checked against a real POSIX shell (sshd runs exec requests through the user's shell with -c).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { shellTricks } from '@berth/core/testing';
import { commandLine, quoteArg } from '../src/index.ts';

t.test('plain words stay as they are; everything else is single-quoted', async t => {
  t.equal(quoteArg('docker'), 'docker');
  t.equal(quoteArg('/var/lib/docker'), '/var/lib/docker');
  t.equal(quoteArg('--format={{.ID}}'), `'--format={{.ID}}'`);
  t.equal(quoteArg(''), `''`, 'an empty argument stays an argument');
  t.equal(quoteArg("it's"), `'it'\\''s'`);
  t.equal(commandLine(['echo', 'a b', '$HOME']), `echo 'a b' '$HOME'`);
});

t.test('a NUL byte or an empty program is refused', async t => {
  t.throws(() => quoteArg('a\0b'), /NUL/);
  t.throws(() => commandLine([]), /argv\[0\]/);
  t.throws(() => commandLine(['']), /argv\[0\]/);
});

for (const shell of ['/bin/sh', '/bin/bash'].filter(existsSync)) {
  t.test(`${shell} -c receives every argument unchanged and acts on none of them`, async t => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'berth-quote-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const marker = path.join(dir, 'pwned');
    const args = [...shellTricks(marker), '', ' ', "'", '"', '\\', 'tab\there', 'ünïcödé ✓', '\n', '!event', '#comment'];
    const out = execFileSync(shell, ['-c', commandLine(['printf', '%s\\0', ...args])], { cwd: dir });
    t.same(out.toString('utf8').split('\0').slice(0, -1), args, 'printf printed each argument exactly');
    t.notOk(existsSync(marker), 'no argument ran as a command');
  });
}
