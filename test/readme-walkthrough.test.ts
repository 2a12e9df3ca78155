// The README's own commands, as a new user runs them: a fresh clone of the repository, its start
// command (`bash scripts/start.sh`, here with a data directory and a port of its own, on the
// embedded database), then the README's walkthrough block (the fenced block tagged
// `sh berth-walkthrough`) run as it stands, with IMAGE set to a locally built image since nothing
// can be pulled here. Each answer is checked.
import t from 'tap';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { freePort, waitFor, TEST_STATIC_IMAGE } from '@berth/core/testing';
import { repoRoot } from './helpers.ts';

const run = promisify(execFile);
const docker = new Docker();
const PAGE = 'served by the walkthrough image';
const IMAGE = 'berth-test/walkthrough:1';
t.setTimeout(900_000);

/** The README's walkthrough block, by its fixed marker. */
export function walkthroughBlock(readme: string): string {
  const blocks = [...readme.matchAll(/^```sh berth-walkthrough\n([\s\S]*?)^```$/gm)];
  if (blocks.length !== 1) throw new Error(`README.md has ${blocks.length} blocks tagged "sh berth-walkthrough", not one`);
  return blocks[0]![1]!;
}

t.test('a fresh clone starts with scripts/start.sh and the README walkthrough runs verbatim', async t => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'berth-readme-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const clone = path.join(dir, 'berth');
  await run('git', ['clone', '--quiet', repoRoot, clone]);
  // An image that serves HTTP on port 80, as the walkthrough's default (nginx:alpine) does.
  await run('bash', ['-c', `printf 'FROM ${TEST_STATIC_IMAGE}\\nRUN echo "${PAGE}" > /www/index.html\\n' | docker build -q -t ${IMAGE} -`]);

  const port = await freePort();
  const appPort = await freePort();
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TAP|_TAPJS|NODE_OPTIONS$|TS_NODE|DATABASE_URL$|BERTH_)/.test(k)));
  const berth = spawn('bash', ['scripts/start.sh'], { cwd: clone, env: { ...env, PORT: String(port), BERTH_DATA_DIR: path.join(dir, 'data') }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  berth.stdout!.on('data', d => (log += d));
  berth.stderr!.on('data', d => (log += d));
  const exited = new Promise<number | null>(resolve => berth.on('exit', code => resolve(code)));
  t.teardown(async () => {
    // The application the walkthrough deployed: the service publishing its port.
    for (const s of await docker.listServices()) {
      if (s.Endpoint?.Ports?.some(p => p.PublishedPort === appPort)) await docker.getService(s.ID).remove().catch(() => undefined);
    }
    try { process.kill(-berth.pid!, 'SIGTERM'); } catch { /* gone */ }
    await exited;
  });
  const health = await waitFor('Berth started by scripts/start.sh', async () => {
    if (berth.exitCode !== null) throw new Error(`scripts/start.sh exited ${berth.exitCode}: ${log.slice(-2000)}`);
    const res = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
    return res?.status === 200 ? res.json() : undefined;
  }, { timeout: 600_000, interval: 500 }).catch(e => { throw new Error(`${(e as Error).message}\n${log.slice(-3000)}`); });
  t.same(health, { status: 'ok' }, 'the start command serves the API');
  t.match(log, /embedded database/i, 'on the embedded database, as without DATABASE_URL');

  const block = walkthroughBlock(readFileSync(path.join(clone, 'README.md'), 'utf8'));
  const walk = await run('bash', ['-c', `set -euo pipefail\n${block}`], {
    cwd: clone, env: { ...env, PORT: String(port), IMAGE, APP_PORT: String(appPort) }, timeout: 300_000,
  }).catch(e => { throw new Error(`the walkthrough failed (exit ${e.code}): ${e.stdout}\n${e.stderr}`); });
  const lines = walk.stdout.trim().split('\n');
  t.match(JSON.parse(lines[0]!), [{ name: 'shop', environments: [{ name: 'production', isDefault: true }] }], 'project.all lists the project with its default environment');
  t.match(JSON.parse(lines[1]!), { result: { data: { json: [{ name: 'shop' }] } } }, 'and the tRPC form answers the same');
  t.equal(lines[2], 'true', 'saveDockerProvider answers true');
  t.match(JSON.parse(lines[3]!), { publishedPort: appPort, targetPort: 80, publishMode: 'host' }, 'port.create answers the port');
  t.equal(lines[4], 'true', 'application.deploy answers true');
  t.equal(lines[5], 'deploy: done', 'the deployment is done');
  t.equal(lines[6], PAGE, 'the application answers on its published port');
  t.equal(lines.length, 7, walk.stdout);
});
