// PostgreSQL for the platform: the operator's (databaseUrl) or the embedded one, a server that
// the enabled `persistence` provider runs in the data directory, loaded through the provider
// loader only then. The ORM and Agenda speak the same protocol to both: one code path.
import type { PoolConfig } from 'pg';
import type { BerthConfig } from '../config.ts';
import type { PersistenceServer, PersistenceServerOptions } from '../contracts/persistence-server.ts';
import { loadProvider } from '../provider-loader.ts';

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
  const provider = await loadProvider(config, 'persistence').catch((e: Error) => {
    throw new Error(`No DATABASE_URL is set and the embedded database cannot be loaded: ${e.message}`);
  });
  const server = await provider.start({ dataDir: config.dataDir, ...options });
  return { pool: server.pool, embedded: true, server, close: () => server.stop() };
}
