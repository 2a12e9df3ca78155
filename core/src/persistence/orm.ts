// MikroORM on PostgreSQL with the entities and migrations that core and the enabled plugins
// contribute. Migrations run at start; each is transactional, so an upgrade that fails
// leaves the previous schema and its data as they were.
import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { EntitySchema, EventSubscriber, MigrationObject } from '@mikro-orm/core';
import type { DatabaseEndpoint } from './database.ts';

export interface OrmOptions {
  log?: (message: string) => void;
  endpoint: DatabaseEndpoint;
  entities: EntitySchema<any, any>[];
  migrations: MigrationObject[];
  poolSize: number;
  debug?: boolean;
  /** Flush and transaction subscribers (the audit capture). */
  subscribers?: EventSubscriber[];
}

export async function openOrm({ endpoint, entities, migrations, poolSize, debug, log, subscribers }: OrmOptions): Promise<MikroORM> {
  const { pool } = endpoint;
  const orm = await MikroORM.init({
    entities,
    subscribers: subscribers ?? [],
    ...(pool.connectionString ? { clientUrl: pool.connectionString } : { host: pool.host, port: pool.port, user: pool.user, password: pool.password as string, dbName: pool.database }),
    pool: { min: 0, max: poolSize },
    extensions: [Migrator],
    migrations: { migrationsList: [...migrations].sort((a, b) => a.name.localeCompare(b.name)), tableName: 'berth_migrations', transactional: true, allOrNothing: true, snapshot: false, silent: true },
    debug: debug ?? false,
    ...(log ? { logger: log } : {}),
    // Entities come from many packages; the ORM must not scan folders or guess.
    discovery: { warnWhenNoEntities: false },
    ensureDatabase: false,
    allowGlobalContext: false,
  });
  return orm;
}

export async function migrate(orm: MikroORM): Promise<string[]> {
  const done = await orm.migrator.up();
  return done.map(m => m.name);
}
