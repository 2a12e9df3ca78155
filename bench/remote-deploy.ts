#!/usr/bin/env node
// Remote deploy latency: the time from `application.deploy` to `done` of a prebuilt image on the
// engine of this machine and on a server (a remote host of the test kit, reached over the pooled
// SSH connection), the image already present on both. Berth runs as a child process started like
// scripts/start.sh (compiled build, production flags) on a PostgreSQL database the bench creates
// and drops, with BERTH_DEPLOY_SETTLE=0 (done once the task runs: the settle wait would be the same
// on both). A first round on each engine warms up (it copies the image to the server, connects and
// prepares the engine) and is not counted; rounds alternate local and remote.
//
//   node bench/remote-deploy.ts [--rounds N] [--json FILE]
//
// Needs root (the kit's host), PostgreSQL on 127.0.0.1 (BERTH_BENCH_PG), the berth-test images.
// Everything it creates (services, database, data dir, the remote host) is removed, also on failure.
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
import { privateRemoteHosts, type RemoteHostSet } from '../test/kit/remote-hosts.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const IMAGE = 'berth-test/busybox:1';
const { values: opt } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, json: { type: 'string' } } });
const rounds = Math.max(1, Number(opt.rounds));
const adminUrl = process.env.BERTH_BENCH_PG ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const docker = new Docker();
const suffix = randomBytes(3).toString('hex');
const services: string[] = [];
let child: ChildProcess | undefined;
let dataDir = '';
let dbName = '';
let set: (RemoteHostSet & { down(): Promise<void> }) | undefined;

async function cleanUp() {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  for (const s of services)
    await docker
      .getService(s)
      .remove()
      .catch(() => undefined);
  await set?.down();
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
  set = await privateRemoteHosts(1);
  const host = set.hosts[0]!;
  dbName = `berth_bench_remote_${suffix}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database "${dbName}"`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'berth-bench-remote-'));
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
    BERTH_DEPLOY_SETTLE: '0',
    BERTH_PROXY: 'none',
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
  const key = await call('sshKey.create', { name: 'bench host', privateKey: host.privateKey, publicKey: host.publicKey });
  const server = await call('server.create', { name: 'bench host', ipAddress: host.address, port: 22, username: host.user, sshKeyId: key.sshKeyId, hostKeyFingerprint: host.hostKeyFingerprint });
  const { environment } = await call('project.create', { name: 'bench' });

  /** One deploy of a new application (on the server, or here): call → done, in ms. */
  const deploy = async (i: number, serverId: string | null) => {
    const where = serverId ? 'remote' : 'local';
    const app = await call('application.create', { name: `bench-${where}-${i}`, environmentId: environment.environmentId, ...(serverId ? { serverId } : {}) });
    if (!serverId) services.push(app.appName);
    await call('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: IMAGE });
    await call('application.update', { applicationId: app.applicationId, command: 'sleep', args: ['3600'], stopGracePeriodSwarm: 1_000_000_000 });
    const t0 = performance.now();
    const deploymentId = (await send('application.deploy', { applicationId: app.applicationId })).headers.get('x-berth-deployment-id')!;
    const end = await until(`the ${where} deployment`, async () => {
      const d = await call('deployment.one', { deploymentId }, 'GET');
      return ['done', 'error', 'cancelled'].includes(d.state) ? d : undefined;
    });
    if (end.state !== 'done') throw new Error(`the ${where} deployment ended ${end.state}: ${end.errorMessage}`);
    return performance.now() - t0;
  };

  const warmLocal = await deploy(0, null);
  const warmRemote = await deploy(0, server.serverId);
  const localMs: number[] = [];
  const remoteMs: number[] = [];
  for (let i = 1; i <= rounds; i++) {
    if (i % 2) {
      localMs.push(await deploy(i, null));
      remoteMs.push(await deploy(i, server.serverId));
    } else {
      remoteMs.push(await deploy(i, server.serverId));
      localMs.push(await deploy(i, null));
    }
  }

  const l = median(localMs) / 1000;
  const r = median(remoteMs) / 1000;
  const fmt = (s: number) => `${s.toFixed(2)} s`;
  const row = (label: string, ms: number[]) => `| ${label} | ${fmt(median(ms) / 1000)} | ${fmt(Math.min(...ms) / 1000)} | ${fmt(Math.max(...ms) / 1000)} |`;
  const lines = [
    `Deploy of a prebuilt image (${IMAGE}, already on both engines), ${rounds} rounds each, BERTH_DEPLOY_SETTLE=0:`,
    '',
    '| engine | median | min | max |',
    '|---|---|---|---|',
    row('this machine: application.deploy → done', localMs),
    row('a server over SSH: application.deploy → done', remoteMs),
    '',
    `Warm-up (not counted): local ${fmt(warmLocal / 1000)}, remote ${fmt(warmRemote / 1000)} (connects, prepares the engine, copies the image).`,
    `Aim: remote ≤ local + 0.3 s = ${fmt(l + 0.3)} → ${r <= l + 0.3 ? 'met' : 'MISSED'} (remote − local = ${fmt(r - l)})`,
  ];
  console.log(lines.join('\n'));
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ localMs, remoteMs, warmLocal, warmRemote, rounds }, null, 2));
  // Berth removes what it deployed on the server before the host goes.
  child.kill('SIGTERM');
  await new Promise(resolve => child!.once('exit', resolve));
}

runBench('bench/remote-deploy', main, cleanUp, 20 * 60_000);
