// One database kind as a workload kind of the registry: its records through the service, its
// runs through the deployer, and its removal with all it has on the host and in other plugins.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { optionalService, type Cradle, type EntityManager } from '@berth/core';
import type { RemoveOptions, WorkloadCapabilities, WorkloadKind, WorkloadRef } from '../registry.ts';
import type { DatabaseRow } from './entity.ts';
import type { DatabaseService } from './service.ts';
import type { DatabaseDeployer } from './deployer.ts';
import { summaryOf, workloadSummary } from '../relations.ts';
import type { TObject } from 'typebox';

/** Where a database keeps its files on this host (file mounts); appName is already a strict slug. */
export const databaseDir = (dataDir: string, appName: string) => path.join(dataDir, 'databases', appName);

export class DatabaseKind implements WorkloadKind {
  readonly kind: string;
  readonly idField: string;
  readonly listKey: string;
  readonly label: string;
  readonly capabilities: WorkloadCapabilities = { mounts: true, ports: false, domains: false, backups: true };
  readonly deployer: DatabaseDeployer;
  readonly listItem: TObject;
  readonly #db: DatabaseService;
  readonly #cradle: () => Cradle;

  constructor(db: DatabaseService, deployer: DatabaseDeployer, cradle: () => Cradle) {
    this.#db = db;
    this.deployer = deployer;
    this.#cradle = cradle;
    this.kind = db.driver.kind;
    this.idField = db.idKey;
    this.listKey = db.driver.kind;
    this.label = db.driver.label;
    this.listItem = workloadSummary(this.idField);
  }

  find(id: string, em: EntityManager): Promise<WorkloadRef | null> {
    return this.#db.findRef(id, em);
  }

  findByAppName(appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null> {
    return this.#db.findByAppName(appName, serverId, em);
  }

  inEnvironments(environmentIds: string[], em: EntityManager): Promise<WorkloadRef[]> {
    return this.#db.inEnvironments(environmentIds, em);
  }

  async list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>> {
    const lists = await this.#db.list(environmentIds, em);
    return new Map([...lists].map(([environmentId, views]) => [environmentId, views.map(v => summaryOf(v, this.listItem))]));
  }

  async remove(workload: WorkloadRef, em: EntityManager, options: RemoveOptions): Promise<void> {
    const row = await em.findOne(this.#db.entity, { id: workload.id }) as DatabaseRow | null;
    if (!row) return;
    const cradle = this.#cradle();
    const deployments = optionalService(cradle, 'deployments');
    await deployments?.cancelFor(this.kind, row.id, em);
    await this.deployer.removeAll(row, options);
    await optionalService(cradle, 'mounts')?.removeForService(this.kind, row.id, em);
    await deployments?.removeFor(this.kind, row.id, em, { includeActive: true });
    await rm(databaseDir(cradle.config.dataDir, row.appName), { recursive: true, force: true });
    await em.remove(row).flush();
  }
}
