// Backups of one organization: records (their workload checked through the kind registry,
// their cron validated), manual runs, the file listing of a destination (with what Berth
// recorded of each file) and restores, which are queued as jobs of target type "restore".
import { CronExpressionParser } from 'cron-parser';
import {
  Type,
  badRequest,
  iso,
  findOwned,
  WIRE_STATUS,
  type Cradle,
  type DeploymentService,
  type EnqueueRequest,
  type EntityManager,
  type EventBus,
  type Principal,
  type SecretBox,
  type TSchema,
} from '@berth/core';
import type { OwnDataArchiver } from './own-data/archiver.ts';
import { runToEnd } from './await-deployment.ts';
import { announceBackup } from './runner.ts';
import { generateAppName, type WorkloadKind, type WorkloadRegistry } from '@berth/plugin-workloads';
import { Backup, BackupFile, Destination, Restore, type BackupRow } from './entities.ts';
import type { DestinationService } from './destinations.ts';
import { givenFields } from './given.ts';
import { DATABASE_BACKUP, backupTypeOf, enginesOf, ownerKindOf } from './owner-kinds.ts';
import { WEB_SERVER, assertInstanceOperator, isWebServer } from './web-server.ts';
import { absentDatabaseRelations, backupSchemas, backupWithDatabaseSchema, unregisteredOwnerIds, type BackupCreate, type BackupFileViewT, type BackupUpdate, type RestoreRequest } from './schemas.ts';

export const RESTORE_TARGET = 'restore';
/** The deployments of a database backup's manual runs, as the peer's backups have them. */
export const BACKUP_TARGET = 'backup';

/** A 5- or 6-field cron expression, or a 400 naming the field (`schedule`). */
export function checkSchedule(schedule: string, field = 'schedule'): void {
  const fields = schedule.trim().split(/\s+/).length;
  let problem: string | null = fields === 5 || fields === 6 ? null : `must have 5 or 6 fields, not ${fields}`;
  if (!problem) {
    try {
      CronExpressionParser.parse(schedule);
    } catch (e) {
      problem = `is not a valid cron expression: ${(e as Error).message}`;
    }
  }
  if (problem) throw badRequest(`${field} ${problem}`, [{ path: [field], message: problem }]);
}

/** Stores a restore just created and queues its job, a deployment of the restore target; answers the job (restoreAnswer). */
export async function queueRestore(deployments: DeploymentService, restore: { restoreId: string }, job: Omit<EnqueueRequest, 'targetType' | 'targetId'>, em: EntityManager) {
  await em.flush();
  const deployment = await deployments.enqueue({ targetType: RESTORE_TARGET, targetId: restore.restoreId, ...job }, em);
  return { deploymentId: deployment.deploymentId, restoreId: restore.restoreId, status: WIRE_STATUS[deployment.state], state: deployment.state };
}

export class BackupService {
  readonly #workloads: () => WorkloadRegistry;
  readonly #destinations: DestinationService;
  readonly #deployments: () => DeploymentService;
  readonly #secrets: () => SecretBox;
  readonly #events: () => EventBus;
  readonly #accounts: () => Cradle['accounts'];
  readonly #ownData: () => OwnDataArchiver;

  constructor(o: {
    workloads: () => WorkloadRegistry;
    destinations: DestinationService;
    deployments: () => DeploymentService;
    secrets: () => SecretBox;
    events: () => EventBus;
    accounts: () => Cradle['accounts'];
    ownData: () => OwnDataArchiver;
  }) {
    this.#accounts = o.accounts;
    this.#ownData = o.ownData;
    this.#secrets = o.secrets;
    this.#events = o.events;
    this.#workloads = o.workloads;
    this.#destinations = o.destinations;
    this.#deployments = o.deployments;
  }

  /** The kinds with backups, for the schemas (their wire names and id fields). */
  kinds(): WorkloadKind[] {
    return this.#workloads()
      .supporting('backups')
      .filter(k => k.backups);
  }

  /** The kinds with backups as the schemas need them. */
  #fields() {
    return this.kinds().map(k => ({ kind: k.kind, idField: k.idField, backupType: backupTypeOf(k), engines: enginesOf(k) }));
  }

  /** The kind that owns backups of this backupType and databaseType; a 400 naming the field otherwise. */
  #kind(databaseType: string, backupType = DATABASE_BACKUP): WorkloadKind {
    const kind = ownerKindOf(this.kinds(), backupType, databaseType);
    if (!kind) throw badRequest(`backupType "${backupType}" has no backups here`, [{ path: ['backupType'], message: `must be one of: ${[...new Set(this.kinds().map(backupTypeOf))].join(', ')}` }]);
    if (!enginesOf(kind).includes(databaseType))
      throw badRequest(`databaseType "${databaseType}" has no backups`, [{ path: ['databaseType'], message: `must be one of: ${enginesOf(kind).join(', ')}` }]);
    return kind;
  }

  /** The kind that owns this backup's database. */
  ownerOf(row: { backupType: string; databaseType: string }): WorkloadKind | undefined {
    return ownerKindOf(this.kinds(), row.backupType, row.databaseType);
  }

  /** The backup's service: required (a service name) where the kind runs its databases in services; kept as given otherwise (the peer's field). */
  #serviceName(kind: WorkloadKind, serviceName: string | null | undefined, field: string): string | null {
    if (backupTypeOf(kind) === DATABASE_BACKUP) return serviceName ?? null;
    if (!serviceName || !/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(serviceName))
      throw badRequest(`${field} must name the service of the ${kind.label} that runs the database`, [{ path: field.split('.'), message: 'a service of the stack (letters, digits, _ . -)' }]);
    return serviceName;
  }

  async view(row: BackupRow, em: EntityManager): Promise<Record<string, unknown>> {
    const destination = await em.findOneOrFail(Destination, { destinationId: row.destinationId });
    return {
      backupId: row.backupId,
      appName: row.appName,
      schedule: row.schedule,
      enabled: row.enabled ?? null,
      database: row.database,
      prefix: row.prefix,
      serviceName: row.serviceName ?? null,
      destinationId: row.destinationId,
      keepLatestCount: row.keepLatestCount ?? null,
      backupType: row.backupType,
      databaseType: row.databaseType,
      ...Object.fromEntries(this.kinds().map(k => [k.idField, k === this.ownerOf(row) ? row.databaseId : null])),
      ...Object.fromEntries(unregisteredOwnerIds(this.kinds()).map(f => [f, null])),
      userId: row.userId ?? null,
      metadata: row.metadata ?? null,
      destination: this.#destinations.keyless(destination),
      encrypted: row.encryptionKey != null,
      lastRunAt: iso(row.lastRunAt ?? null),
      lastError: row.lastError ?? null,
      missedWindows: row.missedWindows ?? 0,
      lastMissedAt: iso(row.lastMissedAt ?? null),
    };
  }

  row(backupId: string, organizationId: string, em: EntityManager): Promise<BackupRow> {
    return findOwned(em, Backup, { backupId }, organizationId, 'Backup');
  }

  /** A web-server backup (Berth's own data, no database id): the instance owner's alone, and only once the operator set the passphrase. */
  async #createWebServer(input: BackupCreate, principal: Principal, em: EntityManager) {
    await assertInstanceOperator(this.#accounts(), principal, 'databaseType');
    this.#ownData().assertConfigured();
    checkSchedule(input.schedule);
    await this.#destinations.row(input.destinationId, principal.organizationId, em);
    return this.#insert(input, { backupType: DATABASE_BACKUP, databaseType: WEB_SERVER, databaseId: null, serviceName: null }, principal.organizationId, em);
  }

  async create(input: BackupCreate, principal: Principal, em: EntityManager) {
    if (input.databaseType === WEB_SERVER) return this.#createWebServer(input, principal, em);
    const organizationId = principal.organizationId;
    const kind = this.#kind(input.databaseType, input.backupType);
    const databaseId = input[kind.idField];
    if (typeof databaseId !== 'string' || !databaseId)
      throw badRequest(`${kind.idField} is required for this backup`, [{ path: [kind.idField], message: `required for backupType "${backupTypeOf(kind)}" and databaseType "${input.databaseType}"` }]);
    const serviceName = this.#serviceName(kind, input.serviceName, 'serviceName');
    checkSchedule(input.schedule);
    await this.#workloads().owner(kind.kind, databaseId, organizationId, em);
    await this.#destinations.row(input.destinationId, organizationId, em);
    return this.#insert(input, { backupType: backupTypeOf(kind), databaseType: input.databaseType, databaseId, serviceName }, organizationId, em);
  }

  /** Stores a new backup: what it is of (its type, engine, workload and service) and the input's schedule, destination and options. */
  async #insert(input: BackupCreate, what: { backupType: string; databaseType: string; databaseId: string | null; serviceName: string | null }, organizationId: string, em: EntityManager) {
    const row = em.create(Backup, {
      appName: generateAppName('backup'),
      schedule: input.schedule,
      enabled: input.enabled ?? null,
      database: input.database,
      prefix: input.prefix,
      serviceName: what.serviceName,
      destinationId: input.destinationId,
      keepLatestCount: input.keepLatestCount ?? null,
      backupType: what.backupType,
      databaseType: what.databaseType,
      databaseId: what.databaseId,
      userId: input.userId ?? null,
      metadata: (input.metadata ?? null) as Record<string, unknown> | null,
      organizationId,
      encryptionKey: input.encryptionKey ? this.#secrets().encrypt(input.encryptionKey) : null,
      lastRunAt: null,
      lastError: null,
      missedWindows: 0,
      lastMissedAt: null,
    }) as BackupRow;
    await em.flush();
    return this.view(row, em);
  }

  /** The backup with its database's record joined under the kind's name, the other kinds' null (see withDatabaseSchema). */
  async one(backupId: string, organizationId: string, em: EntityManager) {
    const row = await this.row(backupId, organizationId, em);
    const relations: Record<string, unknown> = Object.fromEntries(absentDatabaseRelations(this.kinds()).map(r => [r, null]));
    const owner = this.ownerOf(row);
    for (const k of this.kinds()) relations[k.kind] = k === owner ? ((await k.record?.(row.databaseId!, em)) ?? null) : null;
    return { ...(await this.view(row, em)), ...relations };
  }

  async update(input: BackupUpdate, principal: Principal, em: EntityManager) {
    const organizationId = principal.organizationId;
    const row = await this.row(input.backupId, organizationId, em);
    if (isWebServer(row)) await assertInstanceOperator(this.#accounts(), principal, 'backupId');
    if (input.databaseType && input.databaseType !== row.databaseType)
      throw badRequest('databaseType cannot change', [{ path: ['databaseType'], message: `is "${row.databaseType}" for this backup` }]);
    checkSchedule(input.schedule);
    await this.#destinations.row(input.destinationId, organizationId, em);
    const owner = this.ownerOf(row);
    Object.assign(row, {
      schedule: input.schedule,
      prefix: input.prefix,
      destinationId: input.destinationId,
      database: input.database,
      ...givenFields(input, ['enabled', 'keepLatestCount', 'metadata']),
      ...(input.serviceName !== undefined ? { serviceName: owner ? this.#serviceName(owner, input.serviceName, 'serviceName') : input.serviceName } : {}),
      ...(input.encryptionKey !== undefined ? { encryptionKey: input.encryptionKey ? this.#secrets().encrypt(input.encryptionKey) : null } : {}),
    });
    await em.flush();
    return this.view(row, em);
  }

  async remove(backupId: string, organizationId: string, em: EntityManager) {
    const row = await this.row(backupId, organizationId, em);
    const view = await this.view(row, em);
    await em.nativeDelete(Backup, { backupId: row.backupId });
    return view;
  }

  /** Runs the backup now as a deployment of the backup (through the kind that owns it, whose procedure this must be); answers true, or a 400 with why it failed. */
  async manual(backupId: string, kind: string, organizationId: string, em: EntityManager): Promise<true> {
    const row = await this.row(backupId, organizationId, em);
    const owner = this.ownerOf(row);
    if (owner?.kind !== kind)
      throw badRequest(`Backup ${backupId} is a ${row.databaseType} backup of ${owner?.label ?? row.backupType}, not of ${this.#workloads().kind(kind)?.label ?? kind}`, [
        { path: ['backupId'], message: `is a ${row.databaseType} backup of ${owner?.label ?? row.backupType}` },
      ]);
    return runToEnd(this.#deployments(), this.#events(), await this.runRequest(row, em), em);
  }

  /**
   * A scheduled run: a deployment of the backup like a manual one (so its runs list it), waited
   * for; its outcome is on the record (the runner's). A run that cannot even be queued (its
   * workload gone) is a failed run too: on the record and raised. A run of the backup that is
   * still queued or going (one queued before a restart: deployments are durable) is not doubled:
   * the window is its, and the record says so once it ends.
   */
  async runScheduled(row: BackupRow, em: EntityManager): Promise<void> {
    const runs = (await this.#deployments().listFor(BACKUP_TARGET, [row.backupId], em)).get(row.backupId) ?? [];
    if (runs.some(d => d.state === 'queued' || d.state === 'running')) return;
    let request: EnqueueRequest;
    try {
      request = await this.runRequest(row, em);
    } catch (e) {
      const message = `The scheduled run could not be queued: ${(e as Error).message}`;
      Object.assign(row, { lastRunAt: new Date(), lastError: message });
      await em.transactional(tx => announceBackup(this.#events(), row, { status: 'error', file: null, error: message }, tx));
      throw e;
    }
    await runToEnd(this.#deployments(), this.#events(), { ...request, title: `Scheduled ${request.title}` }, em);
  }

  /** The deployment of one run of the backup (manual or scheduled), on its workload's host (Berth's own data: this host). */
  async runRequest(row: BackupRow, em: EntityManager): Promise<EnqueueRequest> {
    if (isWebServer(row)) {
      return {
        targetType: BACKUP_TARGET,
        targetId: row.backupId,
        organizationId: row.organizationId,
        serverId: null,
        action: 'backup',
        title: 'Web Server Backup',
        description: "Berth's own data: its database and the data directory's keys",
      };
    }
    const owner = this.ownerOf(row);
    if (!owner) throw badRequest(`Backup ${row.backupId}: no ${row.backupType} kind with backups of ${row.databaseType} is enabled`);
    const workload = await this.#workloads().owner(owner.kind, row.databaseId!, row.organizationId, em);
    return {
      targetType: BACKUP_TARGET,
      targetId: row.backupId,
      organizationId: row.organizationId,
      serverId: workload.serverId,
      action: 'backup',
      title: 'Database Backup',
      description: `${row.databaseType} database ${row.database}${row.serviceName ? ` in service ${row.serviceName}` : ''}`,
    };
  }

  /** Backs up Berth's own data now, as a deployment of the backup like the others' manual runs; the instance owner's alone, 409 without the passphrase. */
  async manualWebServer(backupId: string, principal: Principal, em: EntityManager): Promise<true> {
    const row = await this.row(backupId, principal.organizationId, em);
    if (!isWebServer(row)) throw badRequest(`Backup ${backupId} is a ${row.databaseType} backup, not ${WEB_SERVER}`, [{ path: ['backupId'], message: `is a ${row.databaseType} backup` }]);
    await assertInstanceOperator(this.#accounts(), principal, 'backupId');
    this.#ownData().assertConfigured();
    return runToEnd(this.#deployments(), this.#events(), await this.runRequest(row, em), em);
  }

  /** The files and folders directly below `search`'s folder whose name contains its last part, as the peer lists them (100 at most). */
  async listFiles(input: { destinationId: string; search: string }, organizationId: string, em: EntityManager): Promise<BackupFileViewT[]> {
    const destination = await this.#destinations.row(input.destinationId, organizationId, em);
    const cut = input.search.lastIndexOf('/');
    const base = cut >= 0 ? input.search.slice(0, cut + 1).replace(/^\/+/, '') : '';
    const term = (cut >= 0 ? input.search.slice(cut + 1) : input.search).toLowerCase();
    let objects;
    try {
      objects = await this.#destinations.open(destination).list(base);
    } catch (e) {
      throw badRequest(`Listing the destination failed: ${(e as Error).message}`);
    }
    const recorded = new Map((await em.find(BackupFile, { destinationId: destination.destinationId, organizationId })).map(f => [f.key, f]));
    const entries = new Map<string, BackupFileViewT>();
    for (const o of objects) {
      const rest = o.key.slice(base.length);
      const slash = rest.indexOf('/');
      const name = slash >= 0 ? rest.slice(0, slash) : rest;
      if (!name || name.startsWith('.berth-connection-test-')) continue;
      const path = `${base}${name}${slash >= 0 ? '/' : ''}`;
      if (entries.has(path)) continue;
      const file = slash < 0 ? recorded.get(o.key) : undefined;
      entries.set(path, {
        Path: path,
        Name: name,
        Size: slash >= 0 ? 0 : o.size,
        IsDir: slash >= 0,
        ModTime: slash >= 0 ? null : iso(o.lastModified),
        backupId: file?.backupId ?? null,
        checksum: file?.sha256 ?? null,
        verified: file?.verified ?? null,
        verification: file?.verification ?? null,
      });
    }
    return [...entries.values()]
      .filter(e => !term || e.Path.toLowerCase().includes(term))
      .sort((a, b) => a.Path.localeCompare(b.Path))
      .slice(0, 100);
  }

  /** Queues the restore of a file into a database of the organization (any of the kind; a new databaseName is created); answers the job. */
  async restore(input: RestoreRequest, organizationId: string, em: EntityManager) {
    const kind = this.#kind(input.databaseType, input.backupType);
    const metadata = (input.metadata && typeof input.metadata === 'object' ? input.metadata : {}) as { serviceName?: unknown };
    const serviceName = this.#serviceName(kind, typeof metadata.serviceName === 'string' ? metadata.serviceName : null, 'metadata.serviceName');
    const workload = await this.#workloads().owner(kind.kind, input.databaseId, organizationId, em);
    await this.#destinations.row(input.destinationId, organizationId, em);
    if (input.backupFile.split('/').some(p => p === '..') || input.backupFile.endsWith('/')) {
      throw badRequest('backupFile must be a file of the destination', [{ path: ['backupFile'], message: 'must be a file key, not a folder or a relative path' }]);
    }
    const restore = em.create(Restore, {
      organizationId,
      destinationId: input.destinationId,
      backupType: backupTypeOf(kind),
      databaseType: input.databaseType,
      databaseId: input.databaseId,
      serviceName,
      databaseName: input.databaseName,
      backupFile: input.backupFile,
      encryptionKey: input.encryptionKey ? this.#secrets().encrypt(input.encryptionKey) : null,
    });
    return queueRestore(
      this.#deployments(),
      restore,
      {
        organizationId,
        serverId: workload.serverId,
        action: 'restore',
        title: `Restore ${input.backupFile}`,
        description: `into ${kind.label} ${workload.appName}${serviceName ? ` service ${serviceName}` : ''} (database ${input.databaseName})`,
      },
      em,
    );
  }

  #viewSchema: TSchema | undefined;
  /** The schema of a backup in its database's `one` (backup.one's fields and its runs, as the peer lists them); made once every plugin is set up. */
  viewSchema(): TSchema {
    return (this.#viewSchema ??= Type.Object({
      ...(this.oneSchema() as ReturnType<typeof backupSchemas>['BackupView']).properties,
      deployments: Type.Array(this.#deployments().viewSchema(), { description: 'its manual runs, newest first' }),
    }));
  }

  /** The schema of a backup's answer (the kinds' id fields are known once every plugin is set up). */
  oneSchema(): TSchema {
    return backupSchemas(this.#fields()).BackupView;
  }

  /** The schema of backup.one's answer: oneSchema with the database's record joined. */
  withDatabaseSchema(): TSchema {
    return backupWithDatabaseSchema(
      this.oneSchema(),
      this.kinds().map(k => ({ kind: k.kind, idField: k.idField, recordSchema: k.recordSchema })),
    );
  }

  /** The kinds with backups as the schemas need them (for the procedures). */
  schemaKinds() {
    return this.#fields();
  }

  /** The workload's backups, as its `one` lists them (with their runs), oldest first. */
  async viewsFor(kind: string, id: string, em: EntityManager): Promise<Record<string, unknown>[]> {
    return this.#withRuns(await em.find(Backup, this.#ofWorkload(kind, id), { orderBy: { createdAt: 'asc' } }), em);
  }

  /** The organization's web-server backups (Berth's own data), as viewsFor lists a workload's, oldest first. */
  async webServerViews(organizationId: string, em: EntityManager): Promise<Record<string, unknown>[]> {
    return this.#withRuns(await em.find(Backup, { organizationId, databaseType: WEB_SERVER }, { orderBy: { createdAt: 'asc' } }), em);
  }

  async #withRuns(rows: BackupRow[], em: EntityManager): Promise<Record<string, unknown>[]> {
    const runs = await this.#deployments().listFor(
      BACKUP_TARGET,
      rows.map(r => r.backupId),
      em,
    );
    return Promise.all(rows.map(async r => ({ ...(await this.view(r, em)), deployments: this.#deployments().views(runs.get(r.backupId) ?? []) })));
  }

  /** Drops a removed workload's backups (their files stay in the destination). */
  async removeForWorkload(kind: string, id: string, em: EntityManager): Promise<void> {
    await em.nativeDelete(Backup, this.#ofWorkload(kind, id));
  }

  /** The backups a workload owns: a database kind's of its own type, or those of the kind's backupType. */
  #ofWorkload(kind: string, id: string) {
    const k = this.#workloads().kind(kind);
    const backupType = k ? backupTypeOf(k) : DATABASE_BACKUP;
    return backupType === DATABASE_BACKUP ? { backupType, databaseType: kind, databaseId: id } : { backupType, databaseId: id };
  }
}
