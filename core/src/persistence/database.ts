// PostgreSQL for the platform: the operator's (DATABASE_URL) or an embedded PGlite kept in
// the data directory and served on a private unix socket, so the ORM and Agenda speak the
// same wire protocol to both and there is one code path.
import { mkdirSync, mkdtempSync, rmSync, existsSync, writeFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PoolConfig } from 'pg';
import type { BerthConfig } from '../config.ts';
import { installPinnedQueue, type PinnedQueryQueue } from './pglite-queue.ts';

export interface DatabaseEndpoint {
  /** Connection settings for node-postgres (ORM and Agenda). */
  pool: PoolConfig;
  embedded: boolean;
  close(): Promise<void>;
}

// Tuned so a reopened PGlite stays near 150 MB instead of 300 (see ENVIRONMENT.md).
const SMALL_PGLITE = ['shared_buffers = 8MB', 'work_mem = 1MB', 'wal_buffers = 256kB', 'maintenance_work_mem = 4MB', 'temp_buffers = 1MB'];

export async function openDatabase(config: BerthConfig): Promise<DatabaseEndpoint> {
  if (config.databaseUrl) {
    return { pool: { connectionString: config.databaseUrl }, embedded: false, close: async () => {} };
  }
  const dataDir = path.join(config.dataDir, 'pg');
  mkdirSync(config.dataDir, { recursive: true });
  const lock = lockDataDir(config.dataDir);
  try {
    return await serveEmbedded(dataDir, config, lock);
  } catch (e) {
    lock.release();
    throw e;
  }
}

async function serveEmbedded(dataDir: string, config: BerthConfig, lock: { release(): void }): Promise<DatabaseEndpoint> {
  // Loaded only when needed: an external database never pays for the WASM build.
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const db = await PGlite.create({
    dataDir,
    ...(config.embeddedMemory === 'small' ? { postgresqlconf: SMALL_PGLITE } : {}),
  });
  // A private directory: the socket is reachable by this user only.
  const socketDir = mkdtempSync(path.join(os.tmpdir(), 'berth-pg-'));
  const server = new PGLiteSocketServer({ db, path: path.join(socketDir, '.s.PGSQL.5432'), maxConnections: 32 });
  // The package's own queue lets pooled connections interleave their statements on the one
  // PGlite session, and stalls for good after one failure (see pglite-queue.ts).
  let queue: PinnedQueryQueue;
  try {
    queue = installPinnedQueue(server, db, { log: (message, error) => console.error(`[berth] embedded database: ${message}`, error ?? '') });
    await server.start();
  } catch (e) {
    await db.close().catch(() => {});
    rmSync(socketDir, { recursive: true, force: true });
    throw e;
  }
  return {
    pool: { host: socketDir, port: 5432, user: 'postgres', password: 'postgres', database: 'postgres' },
    embedded: true,
    async close() {
      await server.stop();
      // Detached connections may still be rolling back; let that finish before the database goes.
      await queue.close();
      await db.close();
      rmSync(socketDir, { recursive: true, force: true });
      lock.release();
    },
  };
}

const lockedHere = new Set<string>();

/** One PGlite per embedded data directory: two instances on one directory corrupt it. */
function lockDataDir(dataDir: string) {
  const file = path.join(dataDir, 'berth.pid');
  if (lockedHere.has(file)) throw new Error(`The embedded database in ${dataDir} is in use by process ${process.pid} (this one); stop it first`);
  if (existsSync(file)) {
    const pid = Number(readFileSync(file, 'utf8').trim());
    let alive = false;
    try {
      if (pid && pid !== process.pid) { process.kill(pid, 0); alive = true; }
    } catch { /* stale lock */ }
    if (alive) throw new Error(`The embedded database in ${dataDir} is in use by process ${pid}; stop it first or set DATABASE_URL`);
  }
  writeFileSync(file, String(process.pid));
  lockedHere.add(file);
  return {
    release: () => {
      lockedHere.delete(file);
      rmSync(file, { force: true });
    },
  };
}
