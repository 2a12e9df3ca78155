// PostgreSQL for the platform: the operator's (DATABASE_URL) or the embedded one, a server that
// the persistence-server provider runs in the data directory. The ORM and Agenda speak the same
// protocol to both: one code path.
import type { PoolConfig } from 'pg';
import type { BerthConfig } from '../config.ts';
import { EMBEDDED_PERSISTENCE, type PersistenceServer, type PersistenceServerOptions, type PersistenceServerProvider } from '../contracts/persistence-server.ts';

export interface DatabaseEndpoint {
  /** Connection settings for node-postgres (ORM and Agenda). */
  pool: PoolConfig;
  embedded: boolean;
  /** The embedded server, when this is the embedded database. */
  server?: PersistenceServer;
  close(): Promise<void>;
}

export async function openDatabase(config: BerthConfig, options: Omit<PersistenceServerOptions, 'dataDir'>): Promise<DatabaseEndpoint> {
  if (config.databaseUrl) {
    return { pool: { connectionString: config.databaseUrl }, embedded: false, close: async () => {} };
  }
  let provider: PersistenceServerProvider;
  try {
    provider = ((await import(EMBEDDED_PERSISTENCE)) as { default: PersistenceServerProvider }).default;
  } catch (e) {
    throw new Error(`No DATABASE_URL is set and the embedded database (${EMBEDDED_PERSISTENCE}) cannot be loaded: ${(e as Error).message}`);
  }
  const server = await provider.start({ dataDir: config.dataDir, ...options });
  return { pool: server.pool, embedded: true, server, close: () => server.stop() };
}
