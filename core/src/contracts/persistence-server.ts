// The embedded database as a contract (`persistence`): a PostgreSQL server the platform runs
// itself when the operator configured none (no databaseUrl). The kernel loads its provider through
// the provider loader, and only then, so an operator on an external PostgreSQL never loads it (nor
// needs its binaries installed).
import type { PoolConfig } from 'pg';
import type { Logger } from '../container.ts';

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
  /** Takes the data directory, starts the server and answers once it accepts connections. */
  start(options: PersistenceServerOptions): Promise<PersistenceServer>;
  /** Names the server's binaries: a cluster made by one is copied only for the same (test kits copy one cluster made once). */
  readonly binaries?: string;
  /** Makes a new cluster in a directory without serving it (what start does on a first start), for a test kit to copy. */
  initialize?(dataDir: string, log: Logger): Promise<void>;
}

declare module '../provider.ts' {
  interface ProviderContracts {
    persistence: PersistenceServerProvider;
  }
}
