#!/usr/bin/env node
// Footprint (issue 17): memory and latency of a real Berth process, on the embedded database (a
// PostgreSQL server Berth runs as its child process; its PSS is counted beside Berth's RSS) and on
// an external PostgreSQL (a fresh database), in one run. For each it starts Berth as the README
// does (scripts/start.sh: the compiled build), in a fresh data directory, creates an admin, an API
// key and 200 projects, then times rounds of 1,000 sequential project.one and 200 project.all from
// one client; reads Berth's RSS, the database's PSS and a per-process smaps_rollup breakdown; runs
// autocannon (unless --no-cannon); restarts Berth on the same data (start → ready); stops it with
// SIGTERM (which must exit 0) and removes everything it created. Prints the issue's table, the
// targets and details; exits 1 when a check fails.
//
//   node bench/api.ts [--quick] [--only embedded|external] [--projects N] [--rounds N] [--no-cannon]
//                     [--duration S] [--node-arg=--flag ...] [--env KEY=VALUE ...] [--probe]
//                     [--heap-snapshot DIR] [--json FILE] [--strict]
//   node bench/api.ts --mem-of PID      (the memory readings of any process, then exit)
//
// Everything it talks to is on 127.0.0.1. Every wait has a timeout and the whole run has a
// deadline, after which the child is killed and temporary data removed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import autocannon, { type Result as CannonResult } from 'autocannon';
import pg from 'pg';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = path.join(root, 'core/src/cli.ts');
/** By default Berth starts exactly as the README says: scripts/start.sh (compiled build, production Node flags). */
const startScript = path.join(root, 'scripts/start.sh');
const probeModule = path.join(root, 'bench/probe.mjs');
const HOST = '127.0.0.1';

// ---------------------------------------------------------------- options

const { values: opt } = parseArgs({
  allowNegative: true,
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    projects: { type: 'string' },
    duration: { type: 'string' },
    'node-arg': { type: 'string', multiple: true, default: [] },
    source: { type: 'boolean', default: false },
    env: { type: 'string', multiple: true, default: [] },
    probe: { type: 'boolean', default: false },
    'heap-snapshot': { type: 'string' },
    rounds: { type: 'string' },
    cannon: { type: 'boolean', default: true },
    json: { type: 'string' },
    strict: { type: 'boolean', default: false },
    'mem-of': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opt.help) {
  process.stdout.write(
    readFileSync(fileURLToPath(import.meta.url), 'utf8')
      .split('\n')
      .slice(1, 18)
      .map(l => l.replace(/^\/\/ ?/, ''))
      .join('\n') + '\n',
  );
  process.exit(0);
}

const quick = opt.quick;
const settings = {
  /** Seconds of idleness before an idle RSS reading. */
  idleSeconds: quick ? 2 : 5,
  /**
   * Seconds after start, and after the load, of a second reading: V8's memory reducer gives
   * pages back some 20–30 s after activity ends. 0 = skip (--quick).
   */
  settleSeconds: quick ? 0 : 35,
  projects: Number(opt.projects ?? 200),
  warmupSeconds: quick ? 1 : 3,
  loadSeconds: Number(opt.duration ?? (quick ? 3 : 10)),
  /** Sequential requests from one client (issue 17's measure): project.one, then project.all. */
  sequentialOne: quick ? 200 : 1000,
  sequentialAll: quick ? 50 : 200,
  /** Rounds of sequential requests: latency on a shared machine is noisy, the best and the spread are reported. */
  rounds: Number(opt.rounds ?? (quick ? 1 : 3)),
  connections: 10,
  startTimeoutMs: 180_000,
  stopTimeoutMs: 40_000,
  /** The whole run, both databases. */
  deadlineMs: quick ? 10 * 60_000 : 30 * 60_000,
};
const databases = (opt.only ? opt.only.split(',') : ['embedded', 'external']) as Kind[];
for (const d of databases) if (d !== 'embedded' && d !== 'external') fail(`--only takes embedded and/or external, not "${d}"`);
if (!Number.isInteger(settings.projects) || settings.projects < 1) fail('--projects must be a positive integer');
if (!Number.isInteger(settings.rounds) || settings.rounds < 1) fail('--rounds must be a positive integer');
if (!(settings.loadSeconds > 0)) fail('--duration must be a positive number of seconds');
const extraEnv: Record<string, string> = {};
for (const kv of opt.env) {
  const i = kv.indexOf('=');
  if (i < 1) fail(`--env takes KEY=VALUE, not "${kv}"`);
  extraEnv[kv.slice(0, i)] = kv.slice(i + 1);
}
const nodeArgs = opt['node-arg'];
/** --probe (and --heap-snapshot) load bench/probe.mjs into the child through NODE_OPTIONS, so it still starts as start.sh does. */
const probing = opt.probe || opt['heap-snapshot'] !== undefined;
if (probing) extraEnv.NODE_OPTIONS = [extraEnv.NODE_OPTIONS, '--expose-gc', `--import=${probeModule}`].filter(Boolean).join(' ');
if (opt['heap-snapshot']) extraEnv.BENCH_HEAPSNAPSHOT_DIR = path.resolve(opt['heap-snapshot']);

/** The PostgreSQL server that hosts the external database; only 127.0.0.1 is accepted. */
const adminUrl = process.env.BERTH_BENCH_PG ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
if (new URL(adminUrl).hostname !== HOST) fail(`BERTH_BENCH_PG must point at ${HOST}`);

type Kind = 'embedded' | 'external';

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}
const say = (message: string) => process.stderr.write(`[bench] ${message}\n`);

// ---------------------------------------------------------------- clean-up and deadline

const cleanups: (() => Promise<void> | void)[] = [];
async function cleanUp(): Promise<void> {
  while (cleanups.length) {
    const fn = cleanups.pop()!;
    try {
      await withTimeout(Promise.resolve(fn()), 15_000, 'clean-up step');
    } catch (e) {
      say(`clean-up: ${(e as Error).message}`);
    }
  }
}
const deadline = setTimeout(() => {
  say(`the run took longer than ${settings.deadlineMs / 1000} s: giving up`);
  void cleanUp().finally(() => process.exit(1));
}, settings.deadlineMs);
let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    interrupted = true;
    say(`${sig}: cleaning up`);
    void cleanUp().finally(() => process.exit(130));
  });
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  const ac = new AbortController();
  try {
    return await Promise.race([
      p,
      sleep(ms, undefined, { signal: ac.signal }).then(() => {
        throw new Error(`${what}: no answer within ${ms / 1000} s`);
      }),
    ]);
  } finally {
    ac.abort();
  }
}
/** A sleep that does not by itself keep the process alive (the child's pipes do while it runs). */
const pause = (ms: number) => sleep(ms, undefined, { ref: false });

// ---------------------------------------------------------------- memory readings

interface Mem {
  rss: number;
  hwm: number;
  anon: number;
  file: number;
  /** Resident part of the WebAssembly memories (V8's; none expected now that no database runs inside Berth). */
  wasm: number;
  /** With the embedded database: the PSS of its server (the postmaster and all its children); else 0. */
  dbPss: number;
  /** How many processes that server had. */
  dbProcesses: number;
}
const MB = 1024 * 1024;

function readStatus(pid: number): Omit<Mem, 'wasm' | 'dbPss' | 'dbProcesses'> {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : NaN;
  };
  return { rss: kb('VmRSS'), hwm: kb('VmHWM'), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') };
}

/** status is cheap; smaps walks every mapping, so it is read only at the measuring points, never under load. */
function readMem(pid: number, dataDir?: string): Mem {
  return { ...readStatus(pid), wasm: wasmResident(pid), ...(dataDir ? embeddedPss(dataDir) : { dbPss: 0, dbProcesses: 0 }) };
}

/** Proportional set size of a process (its share of shared pages: the server's shared buffers are counted once over all its processes). */
function pssOf(pid: number): number {
  const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** The embedded server's processes: its postmaster (from postmaster.pid) and every process whose parent it is. */
function embeddedPids(dataDir: string): number[] {
  const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
  // No server (a Berth whose embedded database ran inside its own process): nothing to add.
  if (!existsSync(pidFile)) return [];
  const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  const pids = [postmaster];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) pids.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return pids;
}

/** The embedded server's PSS: the sum over its processes. */
function embeddedPss(dataDir: string): { dbPss: number; dbProcesses: number } {
  const pids = embeddedPids(dataDir);
  let dbPss = 0;
  let dbProcesses = 0;
  for (const pid of pids) {
    try {
      dbPss += pssOf(pid);
      dbProcesses++;
    } catch {
      /* exited meanwhile */
    }
  }
  return { dbPss, dbProcesses };
}

/**
 * Resident size of the WebAssembly memories (none expected: it was PGlite's heap when that ran inside Berth). V8
 * reserves 8 GiB of address space per 32-bit WebAssembly memory and makes the used part
 * read-write: a read-write anonymous mapping directly followed by an inaccessible one, the two
 * together at least 4 GiB. No other mapping of a Node process looks like that.
 */
function wasmResident(pid: number): number {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return NaN;
  }
  type Region = { start: number; end: number; perms: string; anon: boolean; rss: number };
  const regions: Region[] = [];
  for (const line of text.split('\n')) {
    const h = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (h) {
      regions.push({ start: parseInt(h[1]!, 16), end: parseInt(h[2]!, 16), perms: h[3]!, anon: h[4]!.trim() === '', rss: 0 });
    } else if (line.startsWith('Rss:') && regions.length) {
      regions[regions.length - 1]!.rss = Number(/(\d+)/.exec(line)![1]) * 1024;
    }
  }
  let total = 0;
  for (let i = 1; i < regions.length; i++) {
    const guard = regions[i]!;
    if (guard.perms !== '---p' || !guard.anon) continue;
    // The used part may be several read-write mappings in a row (the memory grew in steps).
    let j = i - 1;
    let rss = 0;
    while (j >= 0 && regions[j]!.perms === 'rw-p' && regions[j]!.anon && regions[j]!.end === regions[j + 1]!.start) rss += regions[j--]!.rss;
    if (j < i - 1 && guard.end - regions[j + 1]!.start >= 4 * 1024 * MB) total += rss;
  }
  return total;
}

/** One process's /proc/<pid>/smaps_rollup: what its resident memory is made of. */
interface Rollup {
  pid: number;
  name: string;
  rss: number;
  pss: number;
  pssAnon: number;
  pssFile: number;
  pssShmem: number;
  privateDirty: number;
}

function rollupOf(pid: number): Rollup {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  // PostgreSQL names its processes by their role ("postgres: checkpointer").
  const name = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ').slice(0, 60);
  return { pid, name, rss: kb('Rss'), pss: kb('Pss'), pssAnon: kb('Pss_Anon'), pssFile: kb('Pss_File'), pssShmem: kb('Pss_Shmem'), privateDirty: kb('Private_Dirty') };
}

/** The per-process breakdown: Berth, then every process of its embedded server. */
function breakdown(pid: number, dataDir?: string): Rollup[] {
  const out: Rollup[] = [];
  for (const p of [pid, ...(dataDir ? embeddedPids(dataDir) : [])]) {
    try {
      out.push(rollupOf(p));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

/** Proportional set size of the PostgreSQL backends connected to one database (external only). */
async function backendsPss(dbName: string): Promise<{ count: number; pss: number }> {
  const c = new pg.Client({ connectionString: adminUrl });
  await withTimeout(c.connect(), 10_000, 'connect to PostgreSQL');
  try {
    const { rows } = await c.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [dbName]);
    let pss = 0;
    let count = 0;
    for (const { pid } of rows) {
      try {
        pss += pssOf(pid);
        count++;
      } catch {
        /* not on this machine's /proc (PostgreSQL in a container) or gone */
      }
    }
    return { count, pss };
  } finally {
    await c.end();
  }
}

// ---------------------------------------------------------------- the child process

interface Berth {
  child: ChildProcess;
  pid: number;
  url: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  tail: string[];
  probes: Probe[];
  pendingProbe?: (answer: Omit<Probe, 'at'>) => void;
  startMs: number;
  /** With the embedded database: the data directory, whose postmaster.pid names its server. */
  embeddedDataDir?: string;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.once('error', reject);
    s.listen(0, HOST, () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function childEnv(dataDir: string, port: number, databaseUrl?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Nothing of the caller's Berth configuration leaks in: the bench sets it all.
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('BERTH_') || k === 'DATABASE_URL' || k === 'PORT' || k === 'HOST' || k === 'NODE_OPTIONS') continue;
    env[k] = v;
  }
  return { ...env, PORT: String(port), HOST, BERTH_LOG_LEVEL: 'warn', BERTH_DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), ...extraEnv };
}

async function startBerth(label: string, workDir: string, dataDir: string, databaseUrl?: string): Promise<Berth> {
  const port = await freePort();
  // cwd is the bench's own work dir, so no berth.config.json is picked up.
  const env = childEnv(dataDir, port, databaseUrl);
  const startMs = performance.now();
  // start.sh ends in `exec node …`, so the child's pid is the Berth process itself.
  // --node-arg / --source experiments run the TypeScript sources directly with those arguments.
  const child =
    nodeArgs.length || opt.source
      ? spawn(process.execPath, [...nodeArgs, cli, 'start'], { cwd: workDir, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('bash', [startScript], { cwd: workDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (!child.pid) throw new Error('could not spawn the Berth process');
  const berth: Berth = {
    child,
    pid: child.pid,
    url: `http://${HOST}:${port}`,
    exit: new Promise(resolve => child.once('exit', (code, signal) => resolve({ code, signal }))),
    tail: [],
    probes: [],
    startMs,
    ...(databaseUrl ? {} : { embeddedDataDir: dataDir }),
  };
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    // A killed Berth leaves its embedded server running: ask that to stop too.
    if (berth.embeddedDataDir) {
      try {
        process.kill(Number(readFileSync(path.join(berth.embeddedDataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGINT');
      } catch {
        /* not running */
      }
    }
    await withTimeout(berth.exit, 5_000, 'killed Berth to exit');
  });
  const onLines = (stream: NodeJS.ReadableStream, name: string) => {
    let buf = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buf += chunk;
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.startsWith('BENCH_PROBE ')) {
          const answer = JSON.parse(line.slice('BENCH_PROBE '.length)) as Omit<Probe, 'at'>;
          const p = berth.pendingProbe;
          berth.pendingProbe = undefined;
          p?.(answer);
          continue;
        }
        berth.tail.push(line);
        if (berth.tail.length > 40) berth.tail.shift();
        process.stderr.write(`[berth ${label} ${name}] ${line}\n`);
      }
    });
  };
  onLines(child.stdout!, 'out');
  onLines(child.stderr!, 'err');
  return berth;
}

async function waitHealthy(berth: Berth): Promise<number> {
  const until = Date.now() + settings.startTimeoutMs;
  let exited = false;
  void berth.exit.then(() => {
    exited = true;
  });
  while (Date.now() < until) {
    if (exited) throw new Error(`Berth exited during start (code ${berth.child.exitCode}):\n${berth.tail.join('\n')}`);
    try {
      const res = await fetch(`${berth.url}/health`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.ok) return performance.now() - berth.startMs;
    } catch {
      /* not listening yet */
    }
    await pause(100);
  }
  throw new Error(`Berth did not answer /health within ${settings.startTimeoutMs / 1000} s:\n${berth.tail.join('\n')}`);
}

/** SIGTERM, then the exit status and how long the graceful shutdown took. */
async function stopBerth(berth: Berth): Promise<{ code: number | null; signal: string | null; ms: number }> {
  const t = performance.now();
  berth.child.kill('SIGTERM');
  const { code, signal } = await withTimeout(berth.exit, settings.stopTimeoutMs, 'Berth to exit after SIGTERM');
  return { code, signal, ms: performance.now() - t };
}

/** Throws, with the exit status and the last lines of output, when Berth is no longer running. */
function assertAlive(berth: Berth, when: string): void {
  const { exitCode, signalCode } = berth.child;
  if (exitCode === null && signalCode === null) return;
  throw new Error(
    `Berth (pid ${berth.pid}) ended ${when} with ${signalCode ? `signal ${signalCode}` : `exit code ${exitCode}`}${berth.tail.length ? `; its last output:\n${berth.tail.join('\n')}` : ' and no output'}`,
  );
}

/** The readings of a running Berth. */
function memOf(berth: Berth, when: string): Mem {
  assertAlive(berth, when);
  try {
    return readMem(berth.pid, berth.embeddedDataDir);
  } catch (e) {
    assertAlive(berth, when);
    throw e;
  }
}

/** What bench/probe.mjs answers from inside the child. */
interface Probe {
  at: string;
  usage: Record<string, number>;
  modules: { total: number; byPackage: Record<string, number> };
  snapshot?: string;
}

/** With --probe: asks the child (through bench/probe.mjs) for process.memoryUsage() after a full GC and its modules. */
async function probe(berth: Berth, at: string): Promise<void> {
  if (!probing) return;
  assertAlive(berth, at);
  const answer = new Promise<Omit<Probe, 'at'>>(resolve => {
    berth.pendingProbe = resolve;
  });
  berth.child.kill('SIGUSR2');
  // A heap snapshot of a 100 MB heap takes seconds on a busy machine.
  const a = await withTimeout(answer, 120_000, 'memory probe');
  berth.probes.push({ at, ...a });
  if (a.snapshot) say(`heap snapshot written to ${a.snapshot}`);
}

// ---------------------------------------------------------------- HTTP helpers

async function call(berth: Berth, method: 'GET' | 'POST', op: string, input: unknown, headers: Record<string, string>): Promise<any> {
  const url = method === 'GET' ? `${berth.url}/api/${op}${input ? `?${new URLSearchParams(input as Record<string, string>)}` : ''}` : `${berth.url}/api/${op}`;
  const res = await fetch(url, {
    method,
    headers: { ...headers, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
    body: method === 'POST' ? JSON.stringify(input) : undefined,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${op}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

interface Load {
  p50: number;
  p99: number;
  mean: number;
  rps: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

/** `count` requests one after the other from one client (keep-alive), timed here to the tenth of a millisecond. */
async function sequential(url: string, apiKey: string, count: number): Promise<Load> {
  const times: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    try {
      const res = await fetch(url, { headers: { 'x-api-key': apiKey }, signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      statusCodes[res.status] = (statusCodes[res.status] ?? 0) + 1;
    } catch {
      errors++;
    }
    times.push(performance.now() - t);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  const non2xx = Object.entries(statusCodes)
    .filter(([code]) => !code.startsWith('2'))
    .reduce((n, [, c]) => n + c, 0);
  return {
    p50: at(0.5),
    p99: at(0.99),
    mean: times.reduce((a, b) => a + b, 0) / times.length,
    rps: count / ((performance.now() - started) / 1000),
    requests: count,
    non2xx,
    errors,
    timeouts: 0,
    statusCodes,
  };
}

async function cannon(url: string, apiKey: string, seconds: number, connections: number): Promise<Load> {
  const run = autocannon({ url, method: 'GET', headers: { 'x-api-key': apiKey }, connections, duration: seconds, timeout: 10 });
  const r: CannonResult = await withTimeout(Promise.resolve(run), (seconds + 30) * 1000, `autocannon on ${url}`).catch(e => {
    run.stop();
    throw e;
  });
  return {
    p50: r.latency.p50,
    p99: r.latency.p99,
    mean: r.latency.mean,
    rps: r.requests.average,
    requests: r.latency.totalCount,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count])),
  };
}

/** Samples the child's RSS while `work` runs, for the peak under load. */
async function sampling<T>(pid: number, work: Promise<T>): Promise<{ value: T; peakRss: number }> {
  let peakRss = 0;
  const timer = setInterval(() => {
    try {
      peakRss = Math.max(peakRss, readStatus(pid).rss);
    } catch {
      /* exiting */
    }
  }, 250);
  try {
    return { value: await work, peakRss };
  } finally {
    clearInterval(timer);
  }
}

// ---------------------------------------------------------------- one database

interface Outcome {
  kind: Kind;
  startFirstMs: number;
  startRestartMs: number;
  /** The first start, admin and key made, idle. */
  idleFirst: Mem;
  /** The issue's reading: the first start, after the projects and the sequential rounds. */
  footprint: Mem;
  /** The same, settleSeconds later (V8 gives memory back some seconds after activity ends). */
  footprintSettled?: Mem;
  /** smaps_rollup of Berth and of each process of its embedded server, at the footprint reading. */
  breakdown: Rollup[];
  /** Sequential rounds from one client: sequentialOne project.one, then sequentialAll project.all. */
  rounds: { one: Load; all: Load }[];
  /** autocannon (--no-cannon skips it), after the footprint reading. */
  cannon?: { one: Load; all: Load; peakRss: number; after: Mem; afterSettled?: Mem };
  idleRestart: Mem;
  /** Idle, settleSeconds after the restart. */
  idleRestartSettled?: Mem;
  createMsPerProject: number;
  allBytes: number;
  stops: { code: number | null; signal: string | null; ms: number }[];
  /** External: the PostgreSQL backends serving Berth at the footprint reading (not counted in the aim). */
  backends?: { count: number; pss: number };
  probes: Probe[];
  failures: string[];
}

async function idleReading(berth: Berth, when: string): Promise<Mem> {
  await pause(settings.idleSeconds * 1000);
  return memOf(berth, when);
}

async function benchOne(kind: Kind): Promise<Outcome> {
  const workDir = mkdtempSync(path.join(os.tmpdir(), `berth-bench-${kind}-`));
  cleanups.push(() => rmSync(workDir, { recursive: true, force: true }));
  const dataDir = path.join(workDir, 'data');
  let databaseUrl: string | undefined;
  let dbName = '';
  if (kind === 'external') {
    dbName = `berth_bench_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await withTimeout(admin.connect(), 10_000, `connect to ${adminUrl}`);
    try {
      await admin.query(`create database "${dbName}"`);
    } finally {
      await admin.end();
    }
    cleanups.push(async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists "${dbName}" with (force)`);
      } finally {
        await c.end();
      }
    });
    const u = new URL(adminUrl);
    u.pathname = `/${dbName}`;
    databaseUrl = u.toString();
  }
  const failures: string[] = [];
  const stops: Outcome['stops'] = [];
  const stop = async (berth: Berth, when: string) => {
    const s = await stopBerth(berth);
    stops.push(s);
    if (s.code !== 0) failures.push(`${kind}: SIGTERM ${when} ended Berth with ${s.signal ? `signal ${s.signal}` : `exit code ${s.code}`}, not 0`);
    say(`${kind}: stopped (${when}) in ${s.ms.toFixed(0)} ms, exit code ${s.code}`);
  };
  const checked = (name: string, r: Load) => {
    if (r.non2xx || r.errors || r.timeouts) failures.push(`${kind}: ${name}: ${r.non2xx} non-2xx (${JSON.stringify(r.statusCodes)}), ${r.errors} errors, ${r.timeouts} timeouts`);
    return r;
  };

  // 1. First start in a fresh data directory (database), admin and key, idle.
  say(`${kind}: first start`);
  let berth = await startBerth(kind, workDir, dataDir, databaseUrl);
  const startFirstMs = await waitHealthy(berth);
  say(`${kind}: healthy after ${startFirstMs.toFixed(0)} ms (pid ${berth.pid})`);
  const created = await call(berth, 'POST', 'auth.createAdmin', { email: 'bench@example.com', password: 'bench-password-1234' }, {});
  const keyReply = await call(berth, 'POST', 'user.createApiKey', { name: 'bench', metadata: { organizationId: created.organizationId } }, { authorization: `Bearer ${created.token}` });
  const apiKey: string = keyReply.key;
  if (!apiKey) throw new Error(`user.createApiKey answered no key: ${JSON.stringify(keyReply).slice(0, 200)}`);
  const headers = { 'x-api-key': apiKey };
  const idleFirst = await idleReading(berth, 'idle after the first start');
  say(`${kind}: idle RSS first start ${fmtMB(idleFirst.rss)} MB (peak so far ${fmtMB(idleFirst.hwm)} MB)`);

  // 2. Projects, on the same first start.
  const t = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < settings.projects; i++) {
    const r = await call(berth, 'POST', 'project.create', { name: `bench project ${i}`, description: `project number ${i} of the benchmark` }, headers);
    ids.push(r.project?.projectId ?? r.projectId);
  }
  const createMsPerProject = (performance.now() - t) / settings.projects;
  const listed = (await call(berth, 'GET', 'project.all', undefined, headers)) as unknown[];
  if (!Array.isArray(listed) || listed.length !== settings.projects)
    throw new Error(`project.all answered ${Array.isArray(listed) ? listed.length : typeof listed} projects, expected ${settings.projects}`);
  const allBytes = Buffer.byteLength(JSON.stringify(listed));
  const oneId = ids[Math.floor(ids.length / 2)]!;
  const one = await call(berth, 'GET', 'project.one', { projectId: oneId }, headers);
  if (one.projectId !== oneId) throw new Error(`project.one answered ${JSON.stringify(one).slice(0, 200)}`);
  say(`${kind}: ${settings.projects} projects in ${((createMsPerProject * settings.projects) / 1000).toFixed(1)} s`);

  // 3. The issue's measure: sequential requests from one client, in rounds (the machine is shared: best and spread).
  const oneUrl = `${berth.url}/api/project.one?projectId=${encodeURIComponent(oneId)}`;
  const allUrl = `${berth.url}/api/project.all`;
  const rounds: Outcome['rounds'] = [];
  for (let r = 0; r < settings.rounds; r++) {
    const o = checked('project.one (sequential)', await sequential(oneUrl, apiKey, settings.sequentialOne));
    const a = checked('project.all (sequential)', await sequential(allUrl, apiKey, settings.sequentialAll));
    assertAlive(berth, 'during the sequential requests');
    rounds.push({ one: o, all: a });
    say(`${kind}: round ${r + 1}: project.one p50/p99 ${fmtLat(o)} ms, project.all ${fmtLat(a)} ms`);
  }
  await pause(2000);
  const footprint = memOf(berth, 'after the sequential requests');
  const rollups = breakdown(berth.pid, berth.embeddedDataDir);
  const backends = kind === 'external' ? await backendsPss(dbName) : undefined;
  say(`${kind}: after ${settings.projects} projects and the sequential requests: RSS ${fmtMB(footprint.rss)} MB${footprint.dbProcesses ? ` + database PSS ${fmtMB(footprint.dbPss)} MB` : ''}`);
  let footprintSettled: Mem | undefined;
  if (settings.settleSeconds) {
    await pause((settings.settleSeconds - 2) * 1000);
    footprintSettled = memOf(berth, 'idle after the sequential requests');
    say(`${kind}: ${settings.settleSeconds} s later: RSS ${fmtMB(footprintSettled.rss)} MB${footprintSettled.dbProcesses ? ` + database PSS ${fmtMB(footprintSettled.dbPss)} MB` : ''}`);
  }
  await probe(berth, `first start, ${settings.projects} projects, sequential requests`);

  // 4. Concurrent load (after the footprint reading, which it would inflate).
  let cannonOutcome: Outcome['cannon'];
  if (opt.cannon) {
    const load = async (url: string, seconds: number, name: string) => {
      const r = await cannon(url, apiKey, seconds, settings.connections);
      assertAlive(berth, 'during the load test');
      return checked(name, r);
    };
    const loads = async () => {
      say(`${kind}: autocannon warm-up, then ${settings.connections} connections × ${settings.loadSeconds} s per operation`);
      await load(oneUrl, settings.warmupSeconds, 'project.one warm-up');
      await load(allUrl, settings.warmupSeconds, 'project.all warm-up');
      return { one: await load(oneUrl, settings.loadSeconds, 'project.one (autocannon)'), all: await load(allUrl, settings.loadSeconds, 'project.all (autocannon)') };
    };
    const { value: l, peakRss } = await sampling(berth.pid, loads());
    await pause(2000);
    const after = memOf(berth, 'after the load');
    say(`${kind}: RSS after load ${fmtMB(after.rss)} MB (peak during load ${fmtMB(peakRss)} MB)`);
    let afterSettled: Mem | undefined;
    if (settings.settleSeconds) {
      await pause((settings.settleSeconds - 2) * 1000);
      afterSettled = memOf(berth, 'idle after the load');
      say(`${kind}: RSS ${settings.settleSeconds} s after the load ${fmtMB(afterSettled.rss)} MB`);
    }
    await probe(berth, 'after autocannon');
    cannonOutcome = { ...l, peakRss, after, ...(afterSettled ? { afterSettled } : {}) };
  }

  // 5. Restart on the same data (migrated database, warm build): start → ready, idle.
  await stop(berth, 'after the first start');
  const probes = berth.probes;
  berth = await startBerth(kind, workDir, dataDir, databaseUrl);
  const startRestartMs = await waitHealthy(berth);
  say(`${kind}: restarted, healthy after ${startRestartMs.toFixed(0)} ms (pid ${berth.pid})`);
  await call(berth, 'GET', 'project.all', undefined, headers); // the key survived the restart
  const idleRestart = await idleReading(berth, 'idle after the restart');
  say(`${kind}: idle RSS restart ${fmtMB(idleRestart.rss)} MB`);
  let idleRestartSettled: Mem | undefined;
  if (settings.settleSeconds) {
    await pause(Math.max(0, settings.settleSeconds * 1000 - (performance.now() - berth.startMs - startRestartMs)));
    idleRestartSettled = memOf(berth, 'idle after the restart');
    say(`${kind}: idle RSS ${settings.settleSeconds} s after the restart ${fmtMB(idleRestartSettled.rss)} MB`);
  }
  await probe(berth, 'idle, restart');

  // 6. Stop; clean-up (data dir, database) runs at the end, in reverse order.
  await stop(berth, 'after the restart');
  return {
    kind,
    startFirstMs,
    startRestartMs,
    idleFirst,
    footprint,
    ...(footprintSettled ? { footprintSettled } : {}),
    breakdown: rollups,
    rounds,
    ...(cannonOutcome ? { cannon: cannonOutcome } : {}),
    idleRestart,
    ...(idleRestartSettled ? { idleRestartSettled } : {}),
    createMsPerProject,
    allBytes,
    stops,
    ...(backends ? { backends } : {}),
    probes: [...probes, ...berth.probes],
    failures,
  };
}

// ---------------------------------------------------------------- report

const fmtMB = (bytes: number) => (Number.isFinite(bytes) ? (bytes / MB).toFixed(1) : '?');
const fmtMs = (ms: number) => (Number.isInteger(ms) ? String(ms) : ms.toFixed(1));
const fmtLat = (l: Load) => `${fmtMs(l.p50)} / ${fmtMs(l.p99)}`;
/** Berth's RSS plus, with the embedded database, its server's PSS. */
const total = (m: Mem) => m.rss + m.dbPss;
const fmtAll = (m: Mem) => (m.dbProcesses ? `${fmtMB(total(m))} (${fmtMB(m.rss)} + ${fmtMB(m.dbPss)})` : fmtMB(m.rss));
const fmtRps = (n: number) => n.toFixed(0);
/** The round with the lowest p99, and the range of p50 and p99 over all rounds. */
function bestAndSpread(loads: Load[]): { best: Load; text: string } {
  const best = loads.reduce((a, b) => (b.p99 < a.p99 ? b : a));
  const range = (xs: number[]) => (loads.length > 1 ? `${fmtMs(Math.min(...xs))}–${fmtMs(Math.max(...xs))}` : fmtMs(xs[0]!));
  return { best, text: `${fmtLat(best)}${loads.length > 1 ? ` (rounds: ${range(loads.map(l => l.p50))} / ${range(loads.map(l => l.p99))})` : ''}` };
}

function report(outcomes: Outcome[], errors: { kind: Kind; error: string }[]): { text: string; failed: boolean } {
  const lines: string[] = [];
  const failures = outcomes.flatMap(o => o.failures);
  lines.push(
    `## Berth footprint (${quick ? 'quick' : 'full'}: ${settings.projects} projects; ${settings.rounds} round(s) of ${settings.sequentialOne} sequential project.one + ${settings.sequentialAll} project.all, one client; node ${process.version}, ${os.cpus().length} CPUs, load average ${loadAtStart} at start, ${os.loadavg()[0]!.toFixed(2)} at end)`,
    '',
  );
  lines.push(
    `| database | memory after first start + ${settings.projects} projects + requests (MB) | the same ${settings.settleSeconds} s later (MB) | project.one p50 / p99 (ms) | project.all (${settings.projects}) p50 / p99 (ms) | start → ready, first / restart (s) |`,
  );
  lines.push('|---|---|---|---|---|---|');
  for (const o of outcomes) {
    lines.push(
      `| ${o.kind} | ${fmtAll(o.footprint)} | ${o.footprintSettled ? fmtAll(o.footprintSettled) : 'not measured (--quick)'} | ${bestAndSpread(o.rounds.map(r => r.one)).text} | ${bestAndSpread(o.rounds.map(r => r.all)).text} | ${(o.startFirstMs / 1000).toFixed(1)} / ${(o.startRestartMs / 1000).toFixed(1)} |`,
    );
  }
  for (const e of errors) lines.push(`| ${e.kind} | failed: ${e.error.split('\n')[0]!.replace(/\|/g, '/')} | | | | |`);
  lines.push(
    '',
    `Memory: Berth's RSS, plus with the embedded database its server's PSS (Berth + server in brackets), 2 s after the last sequential request. ` +
      `Latency: the round with the lowest p99, the range over the rounds in brackets (p50 / p99), timed by the bench.${settings.projects !== 200 ? ` (With ${settings.projects} projects, not 200.)` : ''}`,
  );

  // Targets (issue 17).
  const verdict = (ok: boolean | undefined) => (ok === undefined ? 'not measured' : ok ? 'met' : '**MISSED**');
  const ext = outcomes.find(o => o.kind === 'external');
  const emb = outcomes.find(o => o.kind === 'embedded');
  const bestP99 = (o: Outcome, op: 'one' | 'all') => bestAndSpread(o.rounds.map(r => r[op])).best.p99;
  const targets: [string, boolean | undefined, string][] = [
    ["embedded: ≤ 160 MB in all (Berth's RSS + its database server's PSS)", emb && total(emb.footprint) <= 160 * MB, emb ? `${fmtMB(total(emb.footprint))} MB` : ''],
    ['external PostgreSQL: ≤ 80 MB', ext && ext.footprint.rss <= 80 * MB, ext ? `${fmtMB(ext.footprint.rss)} MB` : ''],
    ['project.one p99 ≤ 10 ms', outcomes.length ? outcomes.every(o => bestP99(o, 'one') <= 10) : undefined, outcomes.map(o => `${o.kind} ${fmtMs(bestP99(o, 'one'))} ms`).join(', ')],
    [
      `project.all (${settings.projects}) p99 ≤ 25 ms`,
      outcomes.length ? outcomes.every(o => bestP99(o, 'all') <= 25) : undefined,
      outcomes.map(o => `${o.kind} ${fmtMs(bestP99(o, 'all'))} ms`).join(', '),
    ],
    [
      'start → ready (migrated database, warm build) ≤ 3 s',
      outcomes.length ? outcomes.every(o => o.startRestartMs <= 3000) : undefined,
      outcomes.map(o => `${o.kind} ${(o.startRestartMs / 1000).toFixed(1)} s`).join(', '),
    ],
  ];
  lines.push('', 'Targets:', '');
  for (const [name, ok, detail] of targets) lines.push(`- ${name}: ${verdict(ok)}${detail ? ` (${detail})` : ''}`);

  // Where the memory is: smaps_rollup per process.
  for (const o of outcomes) {
    lines.push('', `${o.kind}: /proc/<pid>/smaps_rollup at the memory reading (MB)`, '', '| process | RSS | PSS | PSS anon | PSS file | PSS shmem | private dirty |', '|---|---|---|---|---|---|---|');
    for (const r of o.breakdown)
      lines.push(`| ${r.pid} ${r.name.replace(/\|/g, '/')} | ${fmtMB(r.rss)} | ${fmtMB(r.pss)} | ${fmtMB(r.pssAnon)} | ${fmtMB(r.pssFile)} | ${fmtMB(r.pssShmem)} | ${fmtMB(r.privateDirty)} |`);
    if (o.breakdown.length > 1) {
      const db = o.breakdown.slice(1);
      const sum = (f: (r: Rollup) => number) => fmtMB(db.reduce((n, r) => n + f(r), 0));
      lines.push(
        `| the database's ${db.length} processes | ${sum(r => r.rss)} | ${sum(r => r.pss)} | ${sum(r => r.pssAnon)} | ${sum(r => r.pssFile)} | ${sum(r => r.pssShmem)} | ${sum(r => r.privateDirty)} |`,
      );
    }
    if (o.backends) lines.push('', `${o.kind}: the external PostgreSQL's ${o.backends.count} backends serving Berth (not counted above): PSS ${fmtMB(o.backends.pss)} MB.`);
  }

  // Details: one row per measure, one column per database.
  const rows: [string, (o: Outcome) => string][] = [
    ['start → /health, first start / restart (ms)', o => `${o.startFirstMs.toFixed(0)} / ${o.startRestartMs.toFixed(0)}`],
    ['idle after the first start (MB)', o => fmtAll(o.idleFirst)],
    ['peak RSS (VmHWM) of the first start, at the memory reading (MB)', o => fmtMB(o.footprint.hwm)],
    ['at the memory reading: private (anon) / file-backed RSS (MB)', o => `${fmtMB(o.footprint.anon)} / ${fmtMB(o.footprint.file)}`],
    ['idle after the restart (MB)', o => fmtAll(o.idleRestart)],
    [`idle ${settings.settleSeconds} s after the restart (MB)`, o => (o.idleRestartSettled ? fmtAll(o.idleRestartSettled) : 'not measured (--quick)')],
    ['project.create, sequential (ms each)', o => o.createMsPerProject.toFixed(1)],
    [`project.one, ${settings.sequentialOne} sequential, each round: p50 / p99 (ms)`, o => o.rounds.map(r => fmtLat(r.one)).join('; ')],
    [`project.all, ${settings.sequentialAll} sequential, each round: p50 / p99 (ms)`, o => o.rounds.map(r => fmtLat(r.all)).join('; ')],
    ['project.all reply (KB)', o => (o.allBytes / 1024).toFixed(0)],
    [
      `autocannon ${settings.connections} conn. × ${settings.loadSeconds} s: project.one / project.all p50/p99 (ms), req/s`,
      o => (o.cannon ? `${fmtLat(o.cannon.one)} / ${fmtLat(o.cannon.all)}, ${fmtRps(o.cannon.one.rps)} / ${fmtRps(o.cannon.all.rps)}` : 'not run'),
    ],
    [
      'autocannon: peak RSS / 2 s after / settled (MB)',
      o => (o.cannon ? `${fmtMB(o.cannon.peakRss)} / ${fmtMB(o.cannon.after.rss)} / ${o.cannon.afterSettled ? fmtMB(o.cannon.afterSettled.rss) : '—'}` : 'not run'),
    ],
    ['resident WebAssembly memory at the reading (MB)', o => fmtMB(o.footprint.wasm)],
    ['SIGTERM → exit, both stops (ms)', o => o.stops.map(x => `${x.ms.toFixed(0)} (code ${x.code})`).join(', ')],
  ];
  if (outcomes.length) lines.push('', 'Details:', '', `| measure | ${outcomes.map(o => o.kind).join(' | ')} |`, `|---|${outcomes.map(() => '---|').join('')}`);
  if (outcomes.length) for (const [name, f] of rows) lines.push(`| ${name} | ${outcomes.map(f).join(' | ')} |`);

  const probed = outcomes.filter(o => o.probes.length);
  if (probed.length) {
    const cols: [string, string][] = [
      ['rss', 'rss'],
      ['heapTotal', 'V8 heap'],
      ['heapUsed', 'heap used'],
      ['space:new_space', 'new space'],
      ['space:old_space', 'old space'],
      ['space:large_object_space', 'large objects'],
      ['space:code_space', 'code'],
      ['external', 'external'],
      ['arrayBuffers', 'arrayBuffers'],
      ['malloced', 'V8 malloc'],
    ];
    lines.push(
      '',
      'After a full GC, from inside the process (--probe; MB):',
      '',
      `| database | when | ${cols.map(c => c[1]).join(' | ')} | modules loaded |`,
      `|---|---|${cols.map(() => '---|').join('')}---|`,
    );
    for (const o of probed) for (const p of o.probes) lines.push(`| ${o.kind} | ${p.at} | ${cols.map(([k]) => fmtMB(p.usage[k] ?? NaN)).join(' | ')} | ${p.modules.total} |`);
    for (const o of probed) {
      const first = o.probes[0]!;
      const top = Object.entries(first.modules.byPackage).sort((a, b) => b[1] - a[1]);
      lines.push('', `${o.kind}: modules loaded at "${first.at}", by package (${first.modules.total} in all): ${top.map(([k, v]) => `${k} ${v}`).join(', ')}`);
    }
  }
  if (nodeArgs.length || Object.keys(extraEnv).length) lines.push('', `Child run with node arguments ${JSON.stringify(nodeArgs)} and environment ${JSON.stringify(extraEnv)}.`);
  if (failures.length || errors.length) {
    lines.push('', '**FAILED CHECKS:**', '');
    for (const f of failures) lines.push(`- ${f}`);
    for (const e of errors) lines.push(`- ${e.kind}: ${e.error}`);
  }
  const missed = targets.some(([, ok]) => ok === false);
  return { text: lines.join('\n') + '\n', failed: failures.length > 0 || errors.length > 0 || (opt.strict && missed) };
}

// ---------------------------------------------------------------- main

if (opt['mem-of']) {
  // A debugging aid: the readings the bench takes, for any process.
  const m = readMem(Number(opt['mem-of']));
  process.stdout.write(
    `${Object.entries(m)
      .map(([k, v]) => `${k} ${fmtMB(v)} MB`)
      .join(', ')}\n`,
  );
  process.exit(0);
}
if (!existsSync(cli)) fail(`cannot find ${cli}`);
if (probing && !existsSync(probeModule)) fail(`cannot find ${probeModule}`);
const loadAtStart = os.loadavg()[0]!.toFixed(2);
const outcomes: Outcome[] = [];
const errors: { kind: Kind; error: string }[] = [];
for (const kind of databases) {
  try {
    outcomes.push(await benchOne(kind));
  } catch (e) {
    if (interrupted) break;
    const error = (e as Error).stack ?? String(e);
    say(`${kind}: ${error}`);
    errors.push({ kind, error: (e as Error).message });
  }
  await cleanUp();
}
clearTimeout(deadline);
const { text, failed } = report(outcomes, errors);
process.stdout.write(`\n${text}`);
if (opt.json) writeFileSync(opt.json, JSON.stringify({ settings, nodeArgs, extraEnv, outcomes, errors }, null, 2));
process.exit(failed ? 1 : 0);
