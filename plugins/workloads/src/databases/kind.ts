// One database kind as a workload kind of the registry: its records through the service, its
// runs through the deployer, and its removal with all it has on the host and in other plugins.
import { notFound, type Cradle, type EntityManager } from '@berth/core';
import type { BackupSource, ListSource, RemoveOptions, WorkloadCapabilities } from '../registry.ts';
import { RecordKind } from '../kind-base.ts';
import type { DatabaseRow } from './entity.ts';
import type { DatabaseService } from './service.ts';
import type { DatabaseDeployer } from './deployer.ts';
import { workloadSummary } from '../relations.ts';
import type { TObject } from 'typebox';
import { databaseSchemas } from './schemas.ts';
import { databaseDir } from './volumes.ts';

export class DatabaseKind extends RecordKind<DatabaseRow> {
  readonly kind: string;
  readonly idField: string;
  readonly listKey: string;
  readonly label: string;
  readonly capabilities: WorkloadCapabilities = { mounts: true, ports: false, domains: false, backups: true };
  declare readonly deployer: DatabaseDeployer;
  /** Dumps and restores through the driver's commands, inside the running task. */
  readonly backups: BackupSource;
  readonly listItem: TObject;
  readonly listSource: ListSource;
  readonly recordSchema: TObject;
  readonly #db: DatabaseService;

  constructor(db: DatabaseService, deployer: DatabaseDeployer, cradle: () => Cradle) {
    super(db, deployer, cradle);
    this.#db = db;
    this.kind = db.driver.kind;
    this.idField = db.idKey;
    this.listKey = db.driver.kind;
    this.label = db.driver.label;
    this.listItem = workloadSummary(this.idField);
    this.listSource = { entity: db.entity };
    this.recordSchema = databaseSchemas(db.driver).Fields;
    this.backups = {
      procedureSuffix: db.driver.backupProcedureSuffix ?? db.driver.kind.charAt(0).toUpperCase() + db.driver.kind.slice(1),
      dump: async (id, { databaseName }, out, io) => this.deployer.dump(await this.#row(id, io.em), databaseName, out, io),
      restore: async (id, { databaseName }, input, io) => this.deployer.restore(await this.#row(id, io.em), databaseName, input, io),
      verify: async (id, { databaseName }, input, io) => this.deployer.verify(await this.#row(id, io.em), databaseName, input, io),
    };
  }

  async #row(id: string, em: EntityManager): Promise<DatabaseRow> {
    const row = await this.load(id, em);
    if (!row) throw notFound(this.label);
    return row;
  }

  async record(id: string, em: EntityManager): Promise<Record<string, unknown> | null> {
    const row = await this.load(id, em);
    return row ? this.#db.view(row) : null;
  }

  protected load(id: string, em: EntityManager): Promise<DatabaseRow | null> {
    return em.findOne(this.#db.entity, { id }) as Promise<DatabaseRow | null>;
  }

  protected filesDir(row: DatabaseRow): string {
    return databaseDir(this.cradle().config.dataDir, row.appName);
  }

  /** The service, and the data volume when the delete asks for it. */
  protected override removeFromHost(row: DatabaseRow, options: RemoveOptions): Promise<void> {
    return this.deployer.removeAll(row, options);
  }
}
