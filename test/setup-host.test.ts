// berth setup-host (which scripts/start.sh runs before it serves): on this machine, set up for the
// tests (root, the Docker engine, a Compose program, swarm mode), every step's check passes and
// nothing changes; as a login that is not root and has no sudo (a user namespace: `id -u` is not 0
// and sudo cannot work there), nothing is applied and each step says whether it is in place.
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cli, nodeFlags, repoRoot } from './helpers.ts';

const run = promisify(execFile);
const STEP_NAMES = ['os', 'docker', 'compose', 'swarm'];

t.test('as root on a machine that has everything: each step in place, nothing changed', async t => {
  const { stdout } = await run(process.execPath, [...nodeFlags, cli, 'setup-host'], { cwd: repoRoot, env: { ...process.env, BERTH_LOG_LEVEL: 'warn' } });
  for (const [i, name] of STEP_NAMES.entries()) t.match(stdout, `[setup-host] [${i + 1}/4] ${name}: `, `${name}: said before it runs`);
  t.equal(stdout.match(/: unchanged$/gm)?.length, 4, 'each of the four: in place, unchanged');
  t.match(stdout, /in place: \d+\.\d+[^\n]*: unchanged/, "docker's check answers the engine's version");
  t.match(stdout, '[setup-host] this machine is ready: 0 step(s) changed, the rest in place');
  t.notMatch(stdout, /will apply/, 'nothing applied');
});

t.test('not root and no sudo: nothing is applied, each step says whether it is in place', async t => {
  const { stdout } = await run('unshare', ['--user', process.execPath, ...nodeFlags, cli, 'setup-host'], { cwd: repoRoot, env: { ...process.env, BERTH_LOG_LEVEL: 'warn' } });
  t.match(stdout, /is not root and has no passwordless sudo: nothing is installed; checking what is missing/);
  t.match(stdout, '[setup-host] os: in place', 'the operating system is checked');
  for (const name of STEP_NAMES) t.match(stdout, new RegExp(`^\\[setup-host\\] ${name}: (in place|missing \\()`, 'm'), `${name}: checked`);
  t.match(stdout, /nothing is missing|step\(s\) missing; the fix: sudo bash scripts\/start\.sh/, 'and the fix, when something is missing');
  t.notMatch(stdout, /will apply|changed, the rest/, 'nothing applied');
});
