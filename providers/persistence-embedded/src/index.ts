// @berth/provider-persistence-embedded: provider "persistence.embedded", which the kernel loads
// when no databaseUrl is configured — a real PostgreSQL run as Berth's child process in its data
// directory.
import { mkdirSync } from 'node:fs';
import { defineProvider, Type, type PersistenceServerProvider } from '@berth/core';
import { EmbeddedPostgres, binariesVersion, createCluster } from './embedded-postgres.ts';
import { lockDataDir, refusePglite } from './data-dir.ts';

export { EmbeddedPostgres, EmbeddedDatabaseError, POSTGRES_MAJOR, binariesVersion, createCluster } from './embedded-postgres.ts';

const embedded: PersistenceServerProvider = {
  get binaries() {
    return binariesVersion();
  },
  initialize: createCluster,
  async start({ dataDir, log, onLost }) {
    mkdirSync(dataDir, { recursive: true });
    const lock = lockDataDir(dataDir);
    try {
      refusePglite(dataDir);
      const server = await EmbeddedPostgres.start({ dataDir, log, onLost });
      return {
        pool: server.pool,
        get url() {
          return server.url;
        },
        async stop() {
          try {
            await server.stop();
          } finally {
            lock.release();
          }
        },
      };
    } catch (e) {
      lock.release();
      throw e;
    }
  },
};

export default defineProvider({ contract: 'persistence', id: 'embedded', options: Type.Object({}, { additionalProperties: false }), create: () => embedded });
