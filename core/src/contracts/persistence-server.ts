// The embedded database as a contract: a PostgreSQL server the platform runs itself when the
// operator configured none (no DATABASE_URL). Core imports its provider only then, so an
// operator on an external PostgreSQL never loads it (nor needs its binaries installed).
import type { PoolConfig } from 'pg';
import type { Logger } from '../container.ts';

/** The package core imports when no databaseUrl is configured. */
export const EMBEDDED_PERSISTENCE = '@berth/provider-persistence-embedded';

export interface PersistenceServerOptions {
  /** Berth's data directory: the server keeps its cluster, password and lock in it. */
  dataDir: string;
  log: Logger;
  /** The server is gone for good (it died again after one restart): Berth must stop serving. Called at most once. */
  onLost: (error: Error) => void;
}

export interface PersistenceServer {
  /** Connection settings for node-postgres (ORM and Agenda). */
  readonly pool: PoolConfig;
  /** A connection URL that node-postgres and libpq's tools (psql, pg_dump) accept. */
  readonly url: string;
  /** Stops the server and releases the data directory. */
  stop(): Promise<void>;
}

export interface PersistenceServerProvider {
  readonly contract: 'persistence-server';
  /** The provider's id (`embedded`). */
  readonly id: string;
  /** Takes the data directory, starts the server and answers once it accepts connections. */
  start(options: PersistenceServerOptions): Promise<PersistenceServer>;
}
