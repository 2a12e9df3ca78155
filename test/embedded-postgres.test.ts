// The embedded database as an operator meets it: `berth start` without DATABASE_URL runs a real
// PostgreSQL 15 as its child process. Everything here is a real process: Berth started as
// scripts/start.sh starts it, its PostgreSQL, signals sent to either of them.
import t, { type Test } from 'tap';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { Client, createTestDatabase, freePort, signUpAdmin, waitFor } from '@berth/core/testing';
import { createKernel } from '@berth/core';
import { cli, nodeFlags, repoRoot } from './helpers.ts';

const run = promisify(execFile);

/** A data directory with a short path: the server's socket lives in it (Unix socket paths are short). */
function dataDirFor(t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'berth-epg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const berthEnv = (dataDir: string, extra: Record<string, string> = {}) => {
  const env: NodeJS.ProcessEnv = { ...process.env, BERTH_DATA_DIR: dataDir, BERTH_CONFIG: '', BERTH_LOG_LEVEL: 'info', ...extra };
  delete env.DATABASE_URL;
  return env;
};

interface Berth {
  child: ChildProcess;
  url: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `berth start` as a child process, healthy. Killed at the end of the test if still running. */
async function startBerth(t: Test, dataDir: string): Promise<Berth> {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeFlags, cli, 'start'], { env: berthEnv(dataDir, { PORT: String(port), HOST: '127.0.0.1' }), cwd: repoRoot });
  let output = '';
  child.stdout!.on('data', d => (output += d));
  child.stderr!.on('data', d => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(resolve => child.on('exit', (code, signal) => resolve({ code, signal })));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${port}`;
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  await waitFor(
    `Berth on ${dataDir} healthy`,
    async () => {
      if (gone) throw new Error(`Berth exited during its start:\n${output}`);
      return (await fetch(`${url}/health`)).ok;
    },
    { timeout: 120_000, interval: 200 },
  );
  return { child, url, output: () => output, exited };
}

/** SIGTERM; asserts the exit code 0 (showing Berth's output when it is not). */
async function stopBerth(t: Test, berth: Berth): Promise<void> {
  berth.child.kill('SIGTERM');
  const { code } = await berth.exited;
  t.equal(code, 0, 'SIGTERM: Berth exits 0', code === 0 ? {} : { output: berth.output().slice(-3000) });
}

const clusterOf = (dataDir: string) => path.join(dataDir, 'postgres');
const postmasterPid = (dataDir: string) => Number(readFileSync(path.join(clusterOf(dataDir), 'postmaster.pid'), 'utf8').split('\n')[0]);

/** The processes working in the cluster directory: the postmaster and all its children. */
function serverProcesses(dataDir: string): number[] {
  const dir = clusterOf(dataDir);
  return readdirSync('/proc')
    .filter(p => /^\d+$/.test(p))
    .filter(p => {
      try {
        return readlinkSync(`/proc/${p}/cwd`) === dir;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A session on the embedded server as an operator opens one: its socket, its password file. */
async function connect(t: Test, dataDir: string, password = readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim()) {
  const c = new pg.Client({ host: clusterOf(dataDir), port: 5432, user: 'postgres', database: 'postgres', password });
  await c.connect();
  t.teardown(() => c.end().catch(() => {}));
  return c;
}

t.test('first start creates a PostgreSQL 15 cluster in the data directory; records survive a restart; SIGTERM stops the server', async t => {
  const dataDir = dataDirFor(t);
  let berth = await startBerth(t, dataDir);
  t.equal(readFileSync(path.join(clusterOf(dataDir), 'PG_VERSION'), 'utf8').trim(), '15');
  t.equal(statSync(path.join(dataDir, 'postgres.password')).mode & 0o777, 0o600, "the password file is the owner's only");
  t.equal(statSync(clusterOf(dataDir)).mode & 0o777, 0o700, 'so is the cluster, with the socket in it');

  const db = await connect(t, dataDir);
  const setting = async (name: string) => (await db.query(`select current_setting('${name}') as v`)).rows[0].v;
  t.equal(await setting('server_version_num').then(v => v.slice(0, 2)), '15');
  t.equal(await setting('listen_addresses'), '', 'no TCP port: the Unix socket only');
  t.equal(await setting('shared_buffers'), '8MB');
  t.equal(await setting('max_connections'), '20');
  await t.rejects(connect(t, dataDir, 'not-the-password'), /password authentication failed/, 'the socket asks for the password');

  const { apiKey } = await signUpAdmin(berth);
  t.equal((await new Client(berth.url, { apiKey }).post('project.create', { name: 'kept' })).status, 200);
  await db.end();
  await stopBerth(t, berth);
  t.same(serverProcesses(dataDir), [], 'the server stopped with Berth');
  t.notOk(existsSync(path.join(clusterOf(dataDir), 'postmaster.pid')), 'a clean shutdown: no postmaster.pid left');
  t.notOk(existsSync(path.join(dataDir, 'berth.pid')), 'the data directory is unlocked');

  berth = await startBerth(t, dataDir);
  const all = await new Client(berth.url, { apiKey }).get('project.all');
  t.same(
    all.body.map((p: { name: string }) => p.name),
    ['kept'],
    'the project and the API key survived',
  );
  t.notMatch(berth.output(), /creating the embedded PostgreSQL/, 'a restart does not run initdb again');
  await stopBerth(t, berth);
});

t.test('a killed server is restarted once; when it is killed again Berth stops with the reason', async t => {
  const dataDir = dataDirFor(t);
  const berth = await startBerth(t, dataDir);
  const { apiKey } = await signUpAdmin(berth);
  const client = new Client(berth.url, { apiKey });
  t.equal((await client.post('project.create', { name: 'before the crash' })).status, 200);

  const first = postmasterPid(dataDir);
  process.kill(first, 'SIGKILL');
  const second = await waitFor(
    'a new postmaster',
    () => {
      try {
        const pid = postmasterPid(dataDir);
        return pid !== first && serverProcesses(dataDir).includes(pid) ? pid : undefined;
      } catch {
        return undefined;
      }
    },
    { timeout: 60_000 },
  );
  // Pooled connections of the dead server fail once; the pool replaces them.
  const after = await waitFor(
    'project.all answered after the restart',
    async () => {
      const r = await client.get('project.all');
      return r.status === 200 ? r : undefined;
    },
    { timeout: 30_000 },
  );
  t.same(
    after.body.map((p: { name: string }) => p.name),
    ['before the crash'],
    'the records are there after the restart',
  );
  t.match(berth.output(), /restarting it once/);
  // The pool can reach the new server before Berth has finished its restart; a kill in that window is
  // "killed during its start", another (also fatal) path. Kill it once Berth says the restart is done.
  await waitFor('Berth to report the restart done', () => /embedded PostgreSQL restarted/.test(berth.output()), { timeout: 60_000 });

  process.kill(second, 'SIGKILL');
  const { code } = await Promise.race([berth.exited, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('Berth did not exit within 60 s of the second crash')), 60_000))]);
  t.equal(code, 1, 'Berth exits 1');
  t.match(berth.output(), /berth: The embedded PostgreSQL was killed by SIGKILL again after it had been restarted once; Berth does not serve without its database/);
  await waitFor('no process of the server left', () => serverProcesses(dataDir).length === 0, { timeout: 30_000 });
  t.notOk(existsSync(path.join(dataDir, 'berth.pid')), 'the data directory is unlocked');
});

t.test('a server left running by a killed Berth is stopped at the next start, which then works', async t => {
  const dataDir = dataDirFor(t);
  let berth = await startBerth(t, dataDir);
  const { apiKey } = await signUpAdmin(berth);
  t.equal((await new Client(berth.url, { apiKey }).post('project.create', { name: 'survivor' })).status, 200);
  const orphan = postmasterPid(dataDir);
  berth.child.kill('SIGKILL');
  await berth.exited;
  t.ok(serverProcesses(dataDir).includes(orphan), 'the server outlives a killed Berth');

  berth = await startBerth(t, dataDir);
  t.match(berth.output(), /a PostgreSQL left running on .* shutting it down/);
  const now = postmasterPid(dataDir);
  t.not(now, orphan, 'a new server runs');
  t.notOk(serverProcesses(dataDir).includes(orphan), 'the old one is gone');
  t.same(
    (await new Client(berth.url, { apiKey }).get('project.all')).body.map((p: { name: string }) => p.name),
    ['survivor'],
  );
  await stopBerth(t, berth);
  t.same(serverProcesses(dataDir), [], 'no stray postgres after the stop');
});

t.test('a cluster of another major version is refused and left as it was', async t => {
  const dataDir = dataDirFor(t);
  mkdirSync(clusterOf(dataDir));
  writeFileSync(path.join(clusterOf(dataDir), 'PG_VERSION'), '16\n');
  await t.rejects(
    createKernel({ env: {}, config: { dataDir, logLevel: 'silent', port: 0 } }),
    /holds a PostgreSQL 16 cluster; this Berth runs PostgreSQL 15 and does not open it\. To move its data: .*pg_dump.*pg_restore/,
  );
  t.same(readdirSync(clusterOf(dataDir)), ['PG_VERSION'], 'nothing written into it');
  t.notOk(existsSync(path.join(dataDir, 'berth.pid')), 'the data directory is unlocked');
});

t.test('a data directory of the earlier embedded engine (PGlite) is refused with the way to carry it over', async t => {
  const dataDir = dataDirFor(t);
  mkdirSync(path.join(dataDir, 'pg'));
  writeFileSync(path.join(dataDir, 'pg', 'PG_VERSION'), '17\n');
  await t.rejects(
    createKernel({ env: {}, config: { dataDir, logLevel: 'silent', port: 0 } }),
    /holds the database of Berth's earlier embedded engine \(PGlite\).*not opened or changed.*berth\.sh db copy --from/,
  );
  t.same(
    readdirSync(dataDir).filter(f => f.startsWith('postgres')),
    [],
    'no cluster made beside it',
  );
  t.same(readdirSync(path.join(dataDir, 'pg')), ['PG_VERSION'], 'nothing written into it');
});

t.test('admin create works on the embedded database; db copy carries records from another PostgreSQL into a new one', async t => {
  const external = await createTestDatabase();
  t.teardown(() => external.drop());
  const dataDir = dataDirFor(t);
  // Every module each command loads, to show the embedded database's package is imported only without DATABASE_URL.
  const loads = (name: string) => path.join(dataDirFor(t), name);
  const recordLoads = ['--import', pathToFileURL(path.join(repoRoot, 'test/fixtures/record-loads.mjs')).href];
  const embeddedPackage = `${path.sep}providers${path.sep}persistence-embedded${path.sep}`;
  const loaded = (file: string) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(u => u.startsWith('file:'))
      .map(u => fileURLToPath(u));
  // Records made on an external PostgreSQL...
  const createdLoads = loads('created.log');
  const created = await run(process.execPath, [...nodeFlags, ...recordLoads, cli, 'admin', 'create', '--email', 'ops@example.com', '--password', 'ops-password-1'], {
    env: { ...berthEnv(dataDirFor(t)), DATABASE_URL: external.url, BERTH_LOAD_LOG: createdLoads },
    cwd: repoRoot,
  });
  const { apiKey } = JSON.parse(created.stdout.trim().split('\n').pop()!);
  t.ok(
    loaded(createdLoads).some(f => f.includes(`${path.sep}core${path.sep}src${path.sep}`)),
    'the load log sees the kernel',
  );
  t.same(
    loaded(createdLoads).filter(f => f.includes(embeddedPackage)),
    [],
    "on an external PostgreSQL the embedded database's package is never imported",
  );

  // ...copied into the embedded database (its first start, with Berth not running).
  const copiedLoads = loads('copied.log');
  const copied = await run(process.execPath, [...nodeFlags, ...recordLoads, cli, 'db', 'copy', '--from', external.url], { env: { ...berthEnv(dataDir), BERTH_LOAD_LOG: copiedLoads }, cwd: repoRoot });
  t.ok(
    loaded(copiedLoads).some(f => f.includes(embeddedPackage)),
    'without DATABASE_URL it is imported',
  );
  t.match(copied.stdout, /^users\t1$/m, 'one user copied');
  t.match(copied.stdout, /^api_keys\t1$/m, 'and its API key');
  const again = await run(process.execPath, [...nodeFlags, cli, 'db', 'copy', '--from', external.url], { env: berthEnv(dataDir), cwd: repoRoot }).catch(e => e);
  t.equal(again.code, 1, 'a second copy is refused');
  t.match(again.stderr, /already holds records/);

  const adminAgain = await run(process.execPath, [...nodeFlags, cli, 'admin', 'create', '--email', 'x@example.com', '--password', 'another-password'], { env: berthEnv(dataDir), cwd: repoRoot }).catch(
    e => e,
  );
  t.equal(adminAgain.code, 1);
  t.match(adminAgain.stderr, /already exists/, 'admin create ran on the embedded database, which has the copied admin');

  const berth = await startBerth(t, dataDir);
  const client = new Client(berth.url, { apiKey });
  t.equal((await client.get('user.get')).status, 200, 'the API key made on the external database works on the embedded one');
  t.equal((await new Client(berth.url).post('auth.login', { email: 'ops@example.com', password: 'ops-password-1' })).status, 200, 'so does the password');
  await stopBerth(t, berth);
});
