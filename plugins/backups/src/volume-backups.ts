// Volume backups of one organization: records (their workload checked through the kind registry,
// their cron validated), runs queued as deployments of the volumeBackup target (manual ones are
// waited for, as the peer's runManually answers once done) and restores queued as deployments of
// the restore target.
import { badRequest, findOwned, iso, type DeploymentRecord, type DeploymentService, type EntityManager, type EnvironmentDirectory, type EventBus } from '@berth/core';
import { generateAppName, type WorkloadKind, type WorkloadRegistry } from '@berth/plugin-workloads';
import { Destination, VolumeBackup, VolumeRestore, type VolumeBackupRow } from './entities.ts';
import type { DestinationService } from './destinations.ts';
import { givenFields } from './given.ts';
import { checkSchedule, queueRestore } from './service.ts';
import { runToEnd } from './await-deployment.ts';
import { volumeOwners, type VolumeBackupInput, type VolumeBackupUpdateInput, type VolumeRestoreRequest } from './volume-schemas.ts';

export const VOLUME_BACKUP_TARGET = 'volumeBackup';
export const RESTORE_VOLUME_ACTION = 'restoreVolume';

export class VolumeBackupService {
  readonly #workloads: () => WorkloadRegistry;
  readonly #destinations: DestinationService;
  readonly #deployments: () => DeploymentService;
  readonly #events: () => EventBus;
  readonly #environments: () => EnvironmentDirectory;

  constructor(o: { workloads: () => WorkloadRegistry; destinations: DestinationService; deployments: () => DeploymentService; events: () => EventBus; environments: () => EnvironmentDirectory }) {
    this.#workloads = o.workloads;
    this.#environments = o.environments;
    this.#destinations = o.destinations;
    this.#deployments = o.deployments;
    this.#events = o.events;
  }

  /** The kinds whose volumes may be backed up: those with mounts. */
  kinds(): WorkloadKind[] {
    return this.#kinds();
  }

  #kinds(): WorkloadKind[] {
    return this.#workloads().supporting('mounts');
  }

  #kind(serviceType: string, field = 'serviceType'): WorkloadKind {
    const kind = this.#kinds().find(k => k.kind === serviceType);
    if (!kind)
      throw badRequest(`${field} "${serviceType}" has no volumes here`, [
        {
          path: [field],
          message: `must be one of: ${this.#kinds()
            .map(k => k.kind)
            .join(', ')}`,
        },
      ]);
    return kind;
  }

  /** The owner the input names: serviceType and its id field, or the one id field given. */
  #owner(input: Record<string, unknown>): { kind: WorkloadKind; id: string } {
    const named = this.#kinds().filter(k => typeof input[k.idField] === 'string' && input[k.idField]);
    const kind = input.serviceType ? this.#kind(String(input.serviceType)) : named[0];
    const id = kind ? input[kind.idField] : undefined;
    if (!kind || typeof id !== 'string' || !id) {
      const field = kind?.idField ?? 'serviceType';
      throw badRequest(`${field} is required: the workload whose volume it is`, [{ path: [field], message: 'required: the workload whose volume it is' }]);
    }
    return { kind, id };
  }

  view(row: VolumeBackupRow): Record<string, unknown> {
    const idField = this.#workloads().kind(row.serviceType)?.idField;
    return {
      volumeBackupId: row.volumeBackupId,
      name: row.name,
      volumeName: row.volumeName,
      prefix: row.prefix,
      serviceType: row.serviceType,
      appName: row.appName,
      serviceName: row.serviceName ?? null,
      turnOff: row.turnOff,
      cronExpression: row.cronExpression,
      keepLatestCount: row.keepLatestCount ?? null,
      enabled: row.enabled ?? null,
      ...Object.fromEntries(volumeOwners(this.#kinds().map(k => k.kind)).map(o => [`${o}Id`, `${o}Id` === idField ? row.serviceId : null])),
      createdAt: iso(row.createdAt)!,
      destinationId: row.destinationId,
      organizationId: row.organizationId,
      lastRunAt: iso(row.lastRunAt ?? null),
      lastError: row.lastError ?? null,
    };
  }

  row(volumeBackupId: string, organizationId: string, em: EntityManager): Promise<VolumeBackupRow> {
    return findOwned(em, VolumeBackup, { volumeBackupId }, organizationId, 'Volume backup');
  }

  async one(volumeBackupId: string, organizationId: string, em: EntityManager) {
    const row = await this.row(volumeBackupId, organizationId, em);
    const destination = await em.findOneOrFail(Destination, { destinationId: row.destinationId });
    const owner = await this.#ownerRecord(row, organizationId, em);
    return {
      ...this.view(row),
      ...Object.fromEntries(volumeOwners(this.#kinds().map(k => k.kind)).map(o => [o, o === row.serviceType ? owner : null])),
      destination: this.#destinations.keyless(destination),
    };
  }

  /** The workload as one joins it (see ownerRecordSchema); null when it is gone. */
  async #ownerRecord(row: VolumeBackupRow, organizationId: string, em: EntityManager): Promise<Record<string, unknown> | null> {
    const kind = this.#workloads().kind(row.serviceType);
    const workload = kind ? await kind.find(row.serviceId, em) : null;
    if (!kind || !workload || workload.organizationId !== organizationId) return null;
    const record = kind.record ? await kind.record(workload.id, em) : { [kind.idField]: workload.id, appName: workload.appName, serverId: workload.serverId };
    return record && { ...record, environment: await this.#environments().placement(workload.environmentId, organizationId, em) };
  }

  async list(input: { id: string; volumeBackupType: string }, organizationId: string, em: EntityManager) {
    const kind = this.#kind(input.volumeBackupType, 'volumeBackupType');
    const workload = await this.#workloads().owner(kind.kind, input.id, organizationId, em);
    const rows = await em.find(VolumeBackup, { serviceType: kind.kind, serviceId: input.id, organizationId }, { orderBy: { createdAt: 'desc' } });
    const owner = { [kind.idField]: workload.id, appName: workload.appName, serverId: workload.serverId };
    return rows.map(r => ({ ...this.view(r), ...Object.fromEntries(volumeOwners(this.#kinds().map(k => k.kind)).map(o => [o, o === kind.kind ? owner : null])) }));
  }

  async create(input: VolumeBackupInput, organizationId: string, em: EntityManager) {
    const { kind, id } = this.#owner(input);
    checkSchedule(input.cronExpression, 'cronExpression');
    await this.#workloads().owner(kind.kind, id, organizationId, em);
    await this.#destinations.row(input.destinationId, organizationId, em);
    const row = em.create(VolumeBackup, {
      name: input.name,
      volumeName: input.volumeName,
      prefix: input.prefix,
      serviceType: kind.kind,
      serviceId: id,
      appName: generateAppName('volumeBackup'),
      serviceName: input.serviceName ?? null,
      turnOff: input.turnOff ?? false,
      cronExpression: input.cronExpression,
      keepLatestCount: input.keepLatestCount ?? null,
      enabled: input.enabled ?? null,
      destinationId: input.destinationId,
      organizationId,
      lastRunAt: null,
      lastError: null,
    }) as VolumeBackupRow;
    await em.flush();
    return this.view(row);
  }

  async update(input: VolumeBackupUpdateInput, organizationId: string, em: EntityManager) {
    const row = await this.row(input.volumeBackupId, organizationId, em);
    if (input.serviceType && input.serviceType !== row.serviceType)
      throw badRequest('serviceType cannot change', [{ path: ['serviceType'], message: `is "${row.serviceType}" for this volume backup` }]);
    checkSchedule(input.cronExpression, 'cronExpression');
    await this.#destinations.row(input.destinationId, organizationId, em);
    Object.assign(row, {
      name: input.name,
      volumeName: input.volumeName,
      prefix: input.prefix,
      cronExpression: input.cronExpression,
      destinationId: input.destinationId,
      ...givenFields(input, ['turnOff', 'enabled', 'keepLatestCount', 'serviceName']),
    });
    await em.flush();
    return this.view(row);
  }

  async remove(volumeBackupId: string, organizationId: string, em: EntityManager) {
    const row = await this.row(volumeBackupId, organizationId, em);
    const view = this.view(row);
    await this.#deployments().removeFor(VOLUME_BACKUP_TARGET, row.volumeBackupId, em, { includeActive: true });
    await em.nativeDelete(VolumeBackup, { volumeBackupId: row.volumeBackupId });
    return view;
  }

  /** The deployment of one run of the backup. */
  #run(row: VolumeBackupRow) {
    return {
      targetType: VOLUME_BACKUP_TARGET,
      targetId: row.volumeBackupId,
      organizationId: row.organizationId,
      serverId: null,
      action: 'backup',
      title: 'Volume Backup',
      description: `volume ${row.volumeName}`,
    };
  }

  /** Queues a run of the backup (its deployment). */
  enqueue(row: VolumeBackupRow, em: EntityManager): Promise<DeploymentRecord> {
    return this.#deployments().enqueue(this.#run(row), em);
  }

  /** Runs the backup now, as a deployment, and answers once it ended: true, or a 400 with why it failed. */
  async runManually(volumeBackupId: string, organizationId: string, em: EntityManager): Promise<true> {
    return runToEnd(this.#deployments(), this.#events(), this.#run(await this.row(volumeBackupId, organizationId, em)), em);
  }

  /** Queues the restore of a file into a workload's volume; answers the job. */
  async restore(input: VolumeRestoreRequest, organizationId: string, em: EntityManager) {
    const kind = this.#kind(input.serviceType);
    const workload = await this.#workloads().owner(kind.kind, input.id, organizationId, em);
    await this.#destinations.row(input.destinationId, organizationId, em);
    if (input.backupFileName.split('/').some(p => p === '..' || p === '.') || input.backupFileName.endsWith('/')) {
      throw badRequest('backupFileName must be a file of the destination', [{ path: ['backupFileName'], message: 'must be a file key, not a folder or a relative path' }]);
    }
    const restore = em.create(VolumeRestore, {
      organizationId,
      destinationId: input.destinationId,
      serviceType: kind.kind,
      serviceId: input.id,
      volumeName: input.volumeName,
      backupFile: input.backupFileName,
    });
    return queueRestore(
      this.#deployments(),
      restore,
      {
        organizationId,
        serverId: workload.serverId,
        action: RESTORE_VOLUME_ACTION,
        title: `Restore ${input.backupFileName}`,
        description: `into volume ${input.volumeName} of ${kind.label} ${workload.appName}`,
      },
      em,
    );
  }

  /** Drops a removed workload's volume backups (their files stay in the destination). */
  async removeForWorkload(kind: string, id: string, em: EntityManager): Promise<void> {
    await em.nativeDelete(VolumeBackup, { serviceType: kind, serviceId: id });
  }
}
