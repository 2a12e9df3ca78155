#!/usr/bin/env node
// Deploy latency: the time from `application.deploy` to the new task running, for a prebuilt
// local image, side by side with a raw `docker service create` of the same image in the same
// run. Berth runs as a child process started like scripts/start.sh (compiled build, production
// flags) on a PostgreSQL database the bench creates and drops. Rounds alternate Berth and raw.
//
//   node bench/deploy.ts [--rounds N] [--settle SECONDS] [--json FILE]
//
// --settle sets BERTH_DEPLOY_SETTLE (how long a new task must keep running before Berth says done;
// Berth's default is 2 s). 0 measures Berth's own overhead against the raw engine.
//
// Berth's time: POST application.deploy → deployment.one reports `done` (Berth only says done
// once Swarm reports the new task running). Raw time: `docker service create -d` (the CLI) →
// the engine lists a task of the service in state running. Both are polled every 25 ms.
// Everything it creates (services, database, data dir) is removed, also on failure.
import { spawn, execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import pg from 'pg';
import { freePort, median, runBench, until } from './util.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const IMAGE = 'berth-test/busybox:1';
const { values: opt } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, settle: { type: 'string' }, json: { type: 'string' } } });
const rounds = Math.max(1, Number(opt.rounds));
const adminUrl = process.env.BERTH_BENCH_PG ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const docker = new Docker();
const suffix = randomBytes(3).toString('hex');
const services: string[] = [];
let child: ChildProcess | undefined;
let dataDir = '';
let dbName = '';

async function cleanUp() {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  for (const s of services)
    await docker
      .getService(s)
      .remove()
      .catch(() => undefined);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  if (dbName) {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists "${dbName}" with (force)`);
    await admin.end();
  }
}

async function main() {
  execFileSync('bash', [path.join(root, 'scripts/build.sh')], { stdio: 'inherit' });
  dbName = `berth_bench_deploy_${suffix}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database "${dbName}"`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'berth-bench-deploy-'));
  const flags = execFileSync('bash', [path.join(root, 'scripts/node-flags.sh')])
    .toString()
    .trim()
    .split(/\s+/);
  const cli = path.join(root, 'core/src/cli.js');
  const env = {
    ...process.env,
    DATABASE_URL: url.toString(),
    BERTH_DATA_DIR: dataDir,
    BERTH_LOG_LEVEL: 'warn',
    BERTH_CONFIG: '',
    MALLOC_ARENA_MAX: '2',
    ...(opt.settle !== undefined ? { BERTH_DEPLOY_SETTLE: opt.settle } : {}),
  };
  const created = await run(process.execPath, [...flags, cli, 'admin', 'create', '--email', 'bench@example.com', '--password', 'bench-password-1'], { env, cwd: root });
  const { apiKey } = JSON.parse(created.stdout.trim().split('\n').pop()!);
  const port = await freePort();
  child = spawn(process.execPath, [...flags, cli, 'start'], { env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, cwd: root, stdio: 'inherit' });
  const base = `http://127.0.0.1:${port}`;
  await until('Berth to listen', async () => ((await fetch(`${base}/health`)).ok ? true : undefined), 60_000);
  const send = async (op: string, input: Record<string, unknown>, method: 'GET' | 'POST' = 'POST') => {
    const res =
      method === 'GET'
        ? await fetch(`${base}/api/${op}?${new URLSearchParams(input as Record<string, string>)}`, { headers: { 'x-api-key': apiKey } })
        : await fetch(`${base}/api/${op}`, { method, headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(input) });
    const body = await res.json();
    if (!res.ok) throw new Error(`${op}: ${res.status} ${JSON.stringify(body)}`);
    return { body, headers: res.headers };
  };
  const call = async (op: string, input: Record<string, unknown>, method: 'GET' | 'POST' = 'POST') => (await send(op, input, method)).body;
  const { environment } = await call('project.create', { name: 'bench' });

  const berthMs: number[] = [];
  const rawMs: number[] = [];
  for (let i = 0; i < rounds; i++) {
    // Berth
    const app = await call('application.create', { name: `bench-${i}`, appName: `bench-berth-${suffix}-${i}`, environmentId: environment.environmentId });
    services.push(app.appName);
    await call('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: IMAGE });
    await call('application.update', { applicationId: app.applicationId, command: 'sleep', args: ['3600'] });
    let t0 = performance.now();
    // A run answers the peer's body; the queued deployment is named in this header.
    const deploymentId = (await send('application.deploy', { applicationId: app.applicationId })).headers.get('x-berth-deployment-id')!;
    const end = await until('the Berth deployment', async () => {
      const d = await call('deployment.one', { deploymentId }, 'GET');
      return ['done', 'error', 'cancelled'].includes(d.state) ? d : undefined;
    });
    if (end.state !== 'done') throw new Error(`Berth deployment ended ${end.state}: ${end.errorMessage}`);
    berthMs.push(performance.now() - t0);

    // Raw docker service create of the same image and command
    const name = `bench-raw-${suffix}-${i}`;
    services.push(name);
    t0 = performance.now();
    await run('docker', ['service', 'create', '-d', '--quiet', '--name', name, IMAGE, 'sleep', '3600']);
    await until('the raw task to run', async () => {
      const tasks = (await docker.listTasks({ filters: { service: [name] } })) as { Status?: { State?: string } }[];
      return tasks.some(t => t.Status?.State === 'running') ? true : undefined;
    });
    rawMs.push(performance.now() - t0);
  }

  const b = median(berthMs) / 1000;
  const r = median(rawMs) / 1000;
  const aim = 1.5 * r + 0.3;
  const fmt = (s: number) => `${s.toFixed(2)} s`;
  const lines = [
    `Deploy of a prebuilt local image (${IMAGE}), ${rounds} rounds, BERTH_DEPLOY_SETTLE=${opt.settle ?? 'default (2)'}:`,
    '',
    '| path | median | min | max |',
    '|---|---|---|---|',
    `| Berth: application.deploy → task running (status done) | ${fmt(b)} | ${fmt(Math.min(...berthMs) / 1000)} | ${fmt(Math.max(...berthMs) / 1000)} |`,
    `| raw: docker service create -d → task running | ${fmt(r)} | ${fmt(Math.min(...rawMs) / 1000)} | ${fmt(Math.max(...rawMs) / 1000)} |`,
    '',
    `Aim: Berth ≤ 1.5 × raw + 0.3 s = ${fmt(aim)} → ${b <= aim ? 'met' : 'MISSED'} (Berth/raw = ${(b / r).toFixed(2)}×)`,
  ];
  console.log(lines.join('\n'));
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ berthMs, rawMs, rounds }, null, 2));
  child.kill('SIGTERM');
  await new Promise(resolve => child!.once('exit', resolve));
}

runBench('bench/deploy', main, cleanUp, 15 * 60_000);
