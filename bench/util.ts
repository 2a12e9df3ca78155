// Helpers shared by the bench scripts: a free loopback port, a bounded poll, a median, and Berth
// built, started as a child process, timed deploying an image and its memory read.
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn, execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });

/** Polls `fn` every 25 ms until it answers something other than undefined (a throw counts as undefined). */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    await sleep(25);
  }
  throw new Error(`timed out: ${what}`);
}

/** Runs a bench's main, then its clean-up, also on an error or once `ms` have passed (exit code 1 then). */
export function runBench(name: string, main: () => Promise<unknown>, cleanUp: () => Promise<unknown>, ms: number) {
  const deadline = setTimeout(() => {
    console.error(`${name}: deadline passed`);
    void cleanUp().finally(() => process.exit(1));
  }, ms);
  main().then(
    async () => {
      await cleanUp();
      clearTimeout(deadline);
    },
    async e => {
      console.error(e);
      await cleanUp();
      clearTimeout(deadline);
      process.exit(1);
    },
  );
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

// Berth as a child process started like scripts/start.sh (compiled build, production flags), each on
// a fresh PostgreSQL database (BERTH_BENCH_PG, trust auth) and data directory that `cleanUpBerths` removes.

export const MB = 1024 * 1024;
export const root = fileURLToPath(new URL('..', import.meta.url));
export const adminUrl = process.env.BERTH_BENCH_PG ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const run = promisify(execFile);
const suffix = randomBytes(3).toString('hex');
const children = new Set<ChildProcess>();
const databases = new Set<string>();
const dirs = new Set<string>();

/** Runs one statement as the admin of BERTH_BENCH_PG. */
export async function sql(query: string) {
  if (new URL(adminUrl).hostname !== '127.0.0.1') throw new Error('BERTH_BENCH_PG must point at 127.0.0.1');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(query);
  } finally {
    await admin.end();
  }
}

/** Kills the Berths still running, removes their data directories and drops their databases. */
export async function cleanUpBerths() {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const db of databases) await sql(`drop database if exists "${db}" with (force)`).catch(() => undefined);
}

export interface Berth {
  child: ChildProcess;
  /** Its base URL (http://127.0.0.1:<port>). */
  url: string;
  /** Its database (on BERTH_BENCH_PG's server). */
  databaseUrl: string;
  /** The admin's API key (X-API-Key), for routes outside the procedures. */
  apiKey: string;
  call: (op: string, input: Record<string, unknown>, method?: 'GET' | 'POST') => Promise<any>;
  send: (op: string, input: Record<string, unknown>) => Promise<Response>;
  stop: () => Promise<void>;
}

/** Compiles Berth and bundles its dependencies (scripts/build.sh; skipped when nothing changed). */
export function buildBerth() {
  execFileSync('bash', [path.join(root, 'scripts/build.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/**
 * Starts the built Berth on a fresh database and data directory with this config file and environment
 * (a key set to undefined is left out: e.g. `BERTH_PROXY`, `none` unless given); an admin and its API
 * key made by `berth admin create`.
 */
export async function startBerth(name: string, config: Record<string, unknown>, extraEnv: Record<string, string | undefined> = {}): Promise<Berth> {
  const db = `berth_bench_${suffix}_${name}`;
  await sql(`create database "${db}"`);
  databases.add(db);
  const url = new URL(adminUrl);
  url.pathname = `/${db}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'berth-bench-'));
  dirs.add(dataDir);
  const configFile = path.join(dataDir, 'bench.config.json');
  writeFileSync(configFile, JSON.stringify(config));
  const env = Object.fromEntries(
    Object.entries({
      ...process.env,
      DATABASE_URL: url.toString(),
      BERTH_DATA_DIR: dataDir,
      BERTH_LOG_LEVEL: 'warn',
      BERTH_CONFIG: configFile,
      BERTH_PROXY: 'none',
      MALLOC_ARENA_MAX: '2',
      ...extraEnv,
    }).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const nodeFlags = execFileSync('bash', [path.join(root, 'scripts/node-flags.sh')])
    .toString()
    .trim()
    .split(/\s+/);
  const cli = path.join(root, 'core/src/cli.js');
  const created = await run(process.execPath, [...nodeFlags, cli, 'admin', 'create', '--email', 'bench@example.com', '--password', 'bench-password-1'], { env, cwd: root });
  const { apiKey } = JSON.parse(created.stdout.trim().split('\n').pop()!);
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeFlags, cli, 'start'], { env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  children.add(child);
  const base = `http://127.0.0.1:${port}`;
  await until('Berth to listen', async () => ((await fetch(`${base}/health`)).ok ? true : undefined), 90_000);
  const send = (op: string, input: Record<string, unknown>) =>
    fetch(`${base}/api/${op}`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(input) });
  const call = async (op: string, input: Record<string, unknown>, method: 'GET' | 'POST' = 'POST') => {
    const res = method === 'GET' ? await fetch(`${base}/api/${op}?${new URLSearchParams(input as Record<string, string>)}`, { headers: { 'x-api-key': apiKey } }) : await send(op, input);
    const body = await res.json();
    if (!res.ok) throw new Error(`${op}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    return body;
  };
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise(resolve => child.once('exit', resolve));
    }
    children.delete(child);
  };
  return { child, url: base, databaseUrl: url.toString(), apiKey, call, send, stop };
}

/** Removes these Swarm services of this machine's engine (`docker service rm`; one already gone is passed over). */
export async function removeServices(names: string[]) {
  for (const n of names) await run('docker', ['service', 'rm', n]).catch(() => undefined);
}

/** VmRSS and RssAnon (the heap and other anonymous memory) of a process, in bytes. */
export function memoryOf(pid: number) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (f: string) => Number(new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon') };
}

/**
 * Creates an application of `image` running `sleep 3600` (on `serverId`'s engine, or this machine's),
 * deploys it and answers its appName and the milliseconds from `application.deploy` to `done`
 * (the deployment's state, polled every 25 ms); another end state throws.
 */
export async function timeDeploy(
  berth: Berth,
  o: {
    name: string;
    environmentId: string;
    image: string;
    serverId?: string;
    appName?: string;
    update?: Record<string, unknown>;
    registry?: { username: string; password: string; registryUrl: string };
  },
) {
  const where = o.serverId ? 'remote' : 'local';
  const app = await berth.call('application.create', { name: o.name, environmentId: o.environmentId, ...(o.appName ? { appName: o.appName } : {}), ...(o.serverId ? { serverId: o.serverId } : {}) });
  await berth.call('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: o.image, ...o.registry });
  await berth.call('application.update', { applicationId: app.applicationId, command: 'sleep', args: ['3600'], ...o.update });
  const t0 = performance.now();
  const res = await berth.send('application.deploy', { applicationId: app.applicationId });
  const body = await res.text();
  if (!res.ok) throw new Error(`application.deploy: ${res.status} ${body.slice(0, 300)}`);
  // A run answers the peer's body; the queued deployment is named in this header.
  const deploymentId = res.headers.get('x-berth-deployment-id')!;
  const end = await until(`the ${where} deployment`, async () => {
    const d = await berth.call('deployment.one', { deploymentId }, 'GET');
    return ['done', 'error', 'cancelled'].includes(d.state) ? d : undefined;
  });
  if (end.state !== 'done') throw new Error(`the ${where} deployment ended ${end.state}: ${end.errorMessage}`);
  return { appName: app.appName as string, ms: performance.now() - t0 };
}

/** A markdown table row of durations in ms: label, then the median, min and max in seconds. */
export function secondsRow(label: string, ms: number[]) {
  const fmt = (x: number) => `${(x / 1000).toFixed(2)} s`;
  return `| ${label} | ${fmt(median(ms))} | ${fmt(Math.min(...ms))} | ${fmt(Math.max(...ms))} |`;
}
