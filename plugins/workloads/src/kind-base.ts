// What every workload kind does the same way: its record lookups go to its service, and its
// removal cancels its runs, takes its service (and, when asked, its data volumes) and files off
// the host, and drops what other plugins keep for it (mounts, domains and their routes) before
// the record itself. A kind supplies
// its names, its service, how a row is loaded and what it alone has on the host.
import { rm } from 'node:fs/promises';
import { optionalService, type Cradle, type EntityManager } from '@berth/core';
import type { PushSource, RemoveOptions, WorkloadCapabilities, WorkloadKind, WorkloadRef } from './registry.ts';
import type { WorkloadLifecycle } from './lifecycle.ts';
import { summaryOf } from './relations.ts';
import { serverFilesDir } from './swarm/mounts.ts';
import type { TObject } from 'typebox';

/** The record lookups of a kind's service that the registry asks for. */
export interface KindRecords {
  findRef(id: string, em: EntityManager): Promise<WorkloadRef | null>;
  findByAppName(appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null>;
  inEnvironments(environmentIds: string[], em: EntityManager): Promise<WorkloadRef[]>;
  list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>>;
}

export abstract class RecordKind<Row extends object> implements WorkloadKind {
  abstract readonly kind: string;
  abstract readonly idField: string;
  abstract readonly listKey: string;
  abstract readonly label: string;
  abstract readonly capabilities: WorkloadCapabilities;
  /** The schema of the kind's entry in an environment's lists (the peer's summary). */
  abstract readonly listItem: TObject;
  /** How it deploys from pushes, when it does. */
  readonly push?: PushSource;
  readonly deployer: WorkloadLifecycle<Row>;
  protected readonly records: KindRecords;
  protected readonly cradle: () => Cradle;

  constructor(records: KindRecords, deployer: WorkloadLifecycle<Row>, cradle: () => Cradle) {
    this.records = records;
    this.deployer = deployer;
    this.cradle = cradle;
  }

  /** The workload's row (null when it is gone). */
  protected abstract load(id: string, em: EntityManager): Promise<Row | null>;
  /** Where the workload keeps its files on this host (file mounts, work directories). */
  protected abstract filesDir(row: Row): string;

  /** Takes the workload's engine objects off the host: its services by default (kinds with data volumes remove those when asked). */
  protected removeFromHost(row: Row, _options: RemoveOptions): Promise<void> {
    return this.deployer.removeService(row);
  }

  /** Drops what other plugins keep for the workload besides its mounts and deployments (ports...). */
  protected async removeAttachments(_row: Row, _em: EntityManager): Promise<void> {}

  find(id: string, em: EntityManager): Promise<WorkloadRef | null> {
    return this.records.findRef(id, em);
  }

  findByAppName(appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null> {
    return this.records.findByAppName(appName, serverId, em);
  }

  inEnvironments(environmentIds: string[], em: EntityManager): Promise<WorkloadRef[]> {
    return this.records.inEnvironments(environmentIds, em);
  }

  async list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>> {
    const lists = await this.records.list(environmentIds, em);
    return new Map([...lists].map(([environmentId, views]) => [environmentId, views.map(v => summaryOf(v, this.listItem))]));
  }

  /** The file mounts a workload on a server had written there (best effort: the server may be gone). */
  protected async removeServerFiles(workload: WorkloadRef): Promise<void> {
    if (workload.serverId === null) return;
    const { hosts } = this.cradle();
    try {
      const dir = await serverFilesDir(hosts, workload.serverId, workload.appName);
      await (await hosts.of(workload.serverId)).run(['rm', '-rf', '--', dir]);
    } catch (e) {
      this.cradle().logger.warn({ err: e, serverId: workload.serverId }, 'the file mounts of a removed workload could not be removed from its server');
    }
  }

  async remove(workload: WorkloadRef, em: EntityManager, options: RemoveOptions): Promise<void> {
    const row = await this.load(workload.id, em);
    if (!row) return;
    const cradle = this.cradle();
    const deployments = optionalService(cradle, 'workloadDeployments');
    await deployments?.cancelFor(this.kind, workload.id, em);
    await this.removeFromHost(row, options);
    await rm(this.filesDir(row), { recursive: true, force: true });
    // What a source keeps for it (drop: its last uploaded archive).
    for (const id of cradle.providers.ids('source')) await cradle.providers.get('source', id).forget?.({ kind: this.kind, id: workload.id });
    await this.removeServerFiles(workload);
    await optionalService(cradle, 'mounts')?.removeForService(this.kind, workload.id, em);
    await optionalService(cradle, 'backupDirectory')?.removeForWorkload(this.kind, workload.id, em);
    await optionalService(cradle, 'scheduleDirectory')?.removeForWorkload(this.kind, workload.id, em);
    await optionalService(cradle, 'workloadPatches')?.removeForWorkload(this.kind, workload.id, em);
    // Its kept releases and their rollback tags (the service is gone: the engine lets the images go).
    await optionalService(cradle, 'workloadRollbacks')?.removeForWorkload(this.kind, workload.id, em);
    if (this.capabilities.domains) await optionalService(cradle, 'domains')?.removeForService(workload, em);
    await this.removeAttachments(row, em);
    // A push webhook Berth registered on its repository goes with it.
    if (this.push) await optionalService(cradle, 'workloadHooks')?.removeWebhook(this.kind, workload.id, em);
    await deployments?.removeFor(this.kind, workload.id, em, { includeActive: true });
    await em.remove(row).flush();
  }
}
