// PostgreSQL for the platform: the operator's (DATABASE_URL) or the embedded one, a PostgreSQL
// server that Berth runs as a child process on a cluster in the data directory. The ORM and
// Agenda speak the same protocol to both: one code path.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { PoolConfig } from 'pg';
import type { BerthConfig } from '../config.ts';
import type { Logger } from '../container.ts';
import { EmbeddedDatabaseError, EmbeddedPostgres } from './embedded-postgres.ts';

export interface DatabaseEndpoint {
  /** Connection settings for node-postgres (ORM and Agenda). */
  pool: PoolConfig;
  embedded: boolean;
  /** The embedded server, when this is the embedded database. */
  server?: EmbeddedPostgres;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  log: Logger;
  /** The embedded server is gone for good (see EmbeddedPostgres): stop serving. */
  onLost: (error: Error) => void;
}

export async function openDatabase(config: BerthConfig, options: OpenDatabaseOptions): Promise<DatabaseEndpoint> {
  if (config.databaseUrl) {
    return { pool: { connectionString: config.databaseUrl }, embedded: false, close: async () => {} };
  }
  mkdirSync(config.dataDir, { recursive: true });
  const lock = lockDataDir(config.dataDir);
  try {
    refusePglite(config.dataDir);
    const server = await EmbeddedPostgres.start({ dataDir: config.dataDir, ...options });
    return {
      pool: server.pool,
      embedded: true,
      server,
      async close() {
        await server.stop();
        lock.release();
      },
    };
  } catch (e) {
    lock.release();
    throw e;
  }
}

/**
 * Berth's embedded database used to be PGlite, in `<dataDir>/pg`. Its files are PostgreSQL 17's
 * on-disk format inside a WebAssembly build: no server of ours can open them, so they are left
 * untouched and the start stops, saying how to carry the data over.
 */
function refusePglite(dataDir: string): void {
  const old = path.join(dataDir, 'pg');
  if (!existsSync(old)) return;
  const kept = path.join(dataDir, 'pglite-old');
  throw new EmbeddedDatabaseError(`${old} holds the database of Berth's earlier embedded engine (PGlite), which this version replaced by PostgreSQL; it was not opened or changed. `
    + `To carry its data over: move it aside (mv ${old} ${kept}), serve it on a local port with the PGlite release that wrote it `
    + `(npx @electric-sql/pglite-socket@0.2.17 --db=${kept} --port=5499), and with Berth stopped copy it into the new embedded database: `
    + `bash scripts/berth.sh db copy --from postgresql://postgres:postgres@127.0.0.1:5499/postgres. `
    + `To start afresh instead, move or remove ${old}.`);
}

const lockedHere = new Set<string>();

/** The start time of a process (clock ticks since boot), which a reused PID does not share. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** One Berth per embedded data directory: two servers on one cluster would corrupt it. */
function lockDataDir(dataDir: string) {
  const file = path.join(dataDir, 'berth.pid');
  if (lockedHere.has(file)) throw new Error(`The embedded database in ${dataDir} is in use by process ${process.pid} (this one); stop it first`);
  if (existsSync(file)) {
    const [pidText, started] = readFileSync(file, 'utf8').trim().split(' ');
    const pid = Number(pidText);
    const alive = Number.isInteger(pid) && pid > 0 && pid !== process.pid && startTime(pid) !== undefined && (started === undefined || startTime(pid) === started);
    if (alive) throw new Error(`The embedded database in ${dataDir} is in use by process ${pid}; stop it first or set DATABASE_URL`);
  }
  writeFileSync(file, `${process.pid} ${startTime(process.pid) ?? ''}`.trim());
  lockedHere.add(file);
  return {
    release: () => {
      lockedHere.delete(file);
      rmSync(file, { force: true });
    },
  };
}
