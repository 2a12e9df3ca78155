// The log file itself: masking and reading the end of large logs.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DeploymentLog, Redactor, logPathFor, readFrom, readTail } from '../src/log.ts';

t.test('redaction masks every registered value, longest first, and ignores values under 3 characters', async t => {
  const r = new Redactor();
  r.add('abc');
  r.add('abcdef');
  r.add('xy');
  r.add(null);
  r.add(undefined);
  t.equal(r.apply('abcdef abc xy abcx'), '****** ****** xy ******x');
});

t.test('a log writes lines (multi-line text split, CRLF normalised) and ignores writes after close', async t => {
  const dir = t.testdir();
  const file = path.join(dir, 'nested', 'a.log');
  const log = new DeploymentLog(file);
  log.redactor.add('t0ken');
  log.write('one\r\ntwo t0ken\n');
  log.write('three');
  await log.close();
  log.write('late');
  t.equal(await readTail(file, 100), 'one\ntwo ******\nthree\n');
  t.equal(await readTail(file, 2), 'two ******\nthree\n');
  t.equal(await readTail(path.join(dir, 'missing.log'), 5), '', 'no file yet: empty');
});

t.test("a swarm join token is cut from a deployment's log, whoever wrote it (core's output filter)", async t => {
  const file = path.join(t.testdir(), 'token.log');
  const log = new DeploymentLog(file);
  log.write('    docker swarm join --token SWMTKN-1-3pu6hszjas19xyp7ghgosyx9k8atbfcr8p2is99znpy26u2lkl-1awxwuwd3z9j1z3puu7rcgdbx 10.0.0.2:2377');
  await log.close();
  t.equal(await readTail(file, 5), '    docker swarm join --token SWMTKN-<redacted> 10.0.0.2:2377\n');
});

t.test('readTail reads the end of a large log without cutting a line', async t => {
  const dir = t.testdir();
  const file = path.join(dir, 'big.log');
  const lines = Array.from({ length: 50_000 }, (_, i) => `line ${i} ${'x'.repeat(i % 50)}`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  t.equal(await readTail(file, 3), `${lines.slice(-3).join('\n')}\n`);
  t.equal(await readTail(file, 10_000), `${lines.slice(-10_000).join('\n')}\n`);
  const small = path.join(dir, 'small.log');
  writeFileSync(small, 'a\nb\n');
  t.equal(await readTail(small, 10), 'a\nb\n', 'fewer lines than asked: all of them');
  t.equal((await readFrom(small, 2)).toString(), 'b\n');
  t.equal((await readFrom(small, 4)).length, 0);
});

t.test('log paths only take plain ids', async t => {
  t.match(logPathFor('/data', 'abcDEF_12-3'), /\/data\/logs\/deployments\/abcDEF_12-3\.log$/);
  t.throws(() => logPathFor('/data', '../etc/passwd'), /Invalid deployment id/);
  t.throws(() => logPathFor('/data', ''), /Invalid deployment id/);
});
