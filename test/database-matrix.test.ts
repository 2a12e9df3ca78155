// The default-db row covers every file that starts a server: each test file that starts a Berth
// kernel (startTestServer, createKernel) or the operator command (or scripts/start.sh) is run by test/database-matrix on
// the default database, or left out there with the reason it cannot (`!<path>  <reason>`).
import t from 'tap';
import { existsSync, globSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readMatrix } from '../scripts/test-matrix.ts';
import { repoRoot } from './helpers.ts';

/** What starting a server looks like in a test file or in a helper file of its own directory. */
const STARTS_SERVER = /\b(startTestServer|createKernel|processDatabase)\(|\[\.\.\.nodeFlags, cli\b|'scripts\/start\.sh'/;

function startsServer(file: string): boolean {
  const text = readFileSync(path.join(repoRoot, file), 'utf8');
  if (STARTS_SERVER.test(text)) return true;
  // A helper beside it that starts one (plugins/deployment/test/helpers.ts's startServer).
  return [...text.matchAll(/from '(\.\.?\/[^']+\.ts)'/g)].some(([, dep]) => {
    const helper = path.join(repoRoot, path.dirname(file), dep!);
    return !helper.endsWith('.test.ts') && existsSync(helper) && STARTS_SERVER.test(readFileSync(helper, 'utf8'));
  });
}

const include: string[] = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).tap.include;
const testFiles = globSync(include, { cwd: repoRoot, exclude: f => /(^|\/)(node_modules|fixtures?)(\/|$)/.test(f) }).sort();
const serverFiles = testFiles.filter(startsServer);

t.test('the detection finds the files that start a server, and only those', async t => {
  t.ok(serverFiles.length >= 50, `${serverFiles.length} of ${testFiles.length} test files start a server`);
  for (const f of ['test/api-transport.test.ts', 'plugins/deployment/test/stream.test.ts', 'test/cli.test.ts', 'test/embedded-postgres.test.ts']) t.ok(serverFiles.includes(f), `${f} starts one`);
  for (const f of ['core/test/crypto.test.ts', 'providers/proxy-traefik/test/traefik-files.test.ts', 'test/test-command.test.ts']) t.notOk(serverFiles.includes(f), `${f} does not`);
});

t.test('every file that starts a server runs on the default database, or the matrix says why not', async t => {
  const matrix = readMatrix(path.join(repoRoot, 'test/database-matrix'), repoRoot);
  t.same(
    serverFiles.filter(f => !matrix.run.includes(f) && !matrix.excluded.has(f)),
    [],
    'none is missing from test/database-matrix',
  );
  for (const [file, reason] of matrix.excluded) t.ok(serverFiles.includes(file) && reason.length > 20, `${file} is left out: ${reason}`);
  t.same(
    matrix.run.filter(f => !testFiles.includes(f)),
    [],
    'the matrix runs only test files tap includes',
  );
  t.comment(`default-db row: ${matrix.run.length} files (${matrix.run.filter(f => serverFiles.includes(f)).length} that start a server); left out: ${matrix.excluded.size}`);
});

t.test('a file both named to run and left out is refused, naming the line (a glob with an exclusion is the normal case)', async t => {
  const dir = t.testdir({
    contradiction: 'test/layout.test.ts\n!test/layout.test.ts  left out for a reason long enough\n',
    glob: 'test/l*.test.ts\n!test/layout.test.ts  left out for a reason long enough\n',
  });
  t.throws(() => readMatrix(path.join(dir, 'contradiction'), repoRoot), { message: /contradiction line 1 runs test\/layout\.test\.ts, which another line leaves out/ });
  const globbed = readMatrix(path.join(dir, 'glob'), repoRoot);
  t.notOk(globbed.run.includes('test/layout.test.ts'), 'a glob and an exclusion: the file is left out');
  t.ok(globbed.excluded.has('test/layout.test.ts'));
});
