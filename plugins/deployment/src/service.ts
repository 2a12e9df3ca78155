// Deployment records for workload plugins (the `deployments` contract) and for deployment.*.
// Reads are confined to the caller's organization: another organization's deployment is
// NOT_FOUND, never FORBIDDEN.
import {
  CANCELLED_MESSAGE,
  badRequest,
  newId,
  notFound,
  type BerthConfig,
  type Cradle,
  type Deployer,
  type DeploymentRecord,
  type DeploymentService,
  type DeploymentTargetType,
  type DeploymentTarget,
  type EnqueueRequest,
  type EntityManager,
  type EnvironmentDirectory,
  type TSchema,
} from '@berth/core';
import { centralized, centralizedSchemas, queueJobs } from './centralized.ts';
import { Deployment, type DeploymentRow } from './entities.ts';
import { logPathFor, readTail, removeLog } from './log.ts';
import type { DeploymentQueue } from './queue.ts';
import { isFinished, toRecord, toView } from './views.ts';
import { deploymentSchemas, peerTargets, type DeploymentView, type TargetField } from './schemas.ts';
import { type WorkloadRegistry } from '@berth/plugin-workloads';

const newestFirst = { createdAt: 'desc', deploymentId: 'desc' } as const;

export class DeploymentStore implements DeploymentService {
  readonly #config: BerthConfig;
  readonly #queue: () => DeploymentQueue;
  readonly #workloads: WorkloadRegistry;
  readonly #deployers = new Map<string, Deployer>();
  /** Creation times strictly increase within the process, so FIFO order never depends on a tie. */
  #lastCreated = 0;
  /** Transactions that enqueued and are not committed yet (see onCommit). */
  readonly #uncommitted = new WeakSet<object>();

  readonly #environments: () => EnvironmentDirectory | undefined;

  constructor(config: BerthConfig, workloads: WorkloadRegistry, queue: () => DeploymentQueue, environments: () => EnvironmentDirectory | undefined) {
    this.#config = config;
    this.#environments = environments;
    this.#workloads = workloads;
    this.#queue = queue;
  }

  /** A transaction was committed (the ORM's afterTransactionCommit): records enqueued in one are now visible. */
  onCommit(transaction: object): void {
    if (!this.#uncommitted.has(transaction)) return;
    this.#uncommitted.delete(transaction);
    void this.#queue().wake();
  }

  readonly #targets = new Map<string, TargetField>(peerTargets.map(t => [t.type, t]));

  /** Every target type: the registered workload kinds, then the other targets. */
  targets(): TargetField[] {
    const kinds = this.#workloads.kinds().map(k => ({ type: k.kind, idField: k.idField }));
    return [...kinds, ...[...this.#targets.values()].filter(t => !kinds.some(k => k.type === t.type))];
  }

  /** The rows as the API answers them; the target fields are worked out once per call. */
  #views(rows: DeploymentRow[]): DeploymentView[] {
    const targets = this.targets();
    return rows.map(r => toView(toRecord(r), targets));
  }

  #view(row: DeploymentRow): DeploymentView {
    return this.#views([row])[0]!;
  }

  views(records: DeploymentRecord[]): DeploymentView[] {
    const targets = this.targets();
    return records.map(r => toView(r, targets));
  }

  viewSchema(): TSchema {
    return deploymentSchemas(this.targets()).DeploymentView;
  }

  deployer(targetType: string): Deployer | undefined {
    return this.#deployers.get(targetType);
  }

  // ------------------------------------------------------------ the contract
  registerTarget(target: DeploymentTarget): void {
    this.#targets.set(target.type, { type: target.type, idField: target.idField });
  }

  register(deployer: Deployer): void {
    if (this.#deployers.has(deployer.targetType)) throw new Error(`A deployer for "${deployer.targetType}" deployments is already registered`);
    this.#deployers.set(deployer.targetType, deployer);
  }

  readonly #enqueueChecks: ((request: EnqueueRequest, em: EntityManager) => Promise<void>)[] = [];

  checkBeforeEnqueue(check: (request: EnqueueRequest, em: EntityManager) => Promise<void>): void {
    this.#enqueueChecks.push(check);
  }

  #serverLimits: ((em: EntityManager) => Promise<Record<string, number>>) | undefined;

  limitPerServer(limits: (em: EntityManager) => Promise<Record<string, number>>): void {
    this.#serverLimits = limits;
  }

  /** Each server's limit of deployments at once, by serverId (none registered: every host keeps deployConcurrency). */
  serverLimits(em: EntityManager): Promise<Record<string, number>> {
    return this.#serverLimits?.(em) ?? Promise.resolve({});
  }

  async failRunningOn(serverId: string, reason: string, em: EntityManager): Promise<number> {
    const rows = await em.find(Deployment, { serverId, status: 'running' }, { fields: ['deploymentId'] });
    let failed = 0;
    for (const { deploymentId } of rows) {
      // Running here: aborted, and its end recorded (log, status, the workload settled) as for any failure.
      if (await this.#queue().abort(deploymentId, 'failed', reason)) failed++;
      // Running in another process: its record ends here; that process's heartbeat stops the run.
      else failed += await em.nativeUpdate(Deployment, { deploymentId, status: 'running' }, { status: 'error', errorMessage: reason, finishedAt: new Date() });
    }
    return failed;
  }

  async enqueue(request: EnqueueRequest, em: EntityManager): Promise<DeploymentRecord> {
    for (const check of this.#enqueueChecks) await check(request, em);
    const deploymentId = newId();
    this.#lastCreated = Math.max(Date.now(), this.#lastCreated + 1);
    const row = em.create(Deployment, {
      deploymentId,
      title: request.title,
      description: request.description ?? null,
      checkout: request.checkout ?? null,
      status: 'queued',
      action: request.action,
      targetType: request.targetType,
      targetId: request.targetId,
      organizationId: request.organizationId,
      serverId: request.serverId,
      logPath: logPathFor(this.#config.dataDir, deploymentId),
      errorMessage: null,
      createdAt: new Date(this.#lastCreated),
      startedAt: null,
      finishedAt: null,
    });
    await em.flush();
    // The record is the durable queue entry; if a wake-up is lost, the periodic sweep or the next boot starts it.
    const transaction = em.isInTransaction() ? em.getTransactionContext<object>() : undefined;
    if (transaction) {
      // Inside the caller's transaction the record is not visible yet: wake at the commit. Waiting
      // here for a wake-up written on another connection would deadlock a single-session database
      // (the embedded one), whose other connections wait for this transaction to end.
      this.#uncommitted.add(transaction);
    } else {
      await this.#queue().wake();
    }
    return toRecord(row);
  }

  async listFor(targetType: DeploymentTargetType, targetIds: string[], em: EntityManager): Promise<Map<string, DeploymentRecord[]>> {
    const out = new Map<string, DeploymentRecord[]>(targetIds.map(id => [id, []]));
    if (!targetIds.length) return out;
    const rows = await em.find(Deployment, { targetType, targetId: { $in: targetIds } }, { orderBy: newestFirst });
    for (const row of rows) out.get(row.targetId)?.push(toRecord(row));
    return out;
  }

  async cancelFor(targetType: DeploymentTargetType, targetId: string, em: EntityManager): Promise<number> {
    // The queued ones first: once the running one ends, the next would start.
    let stopped = await this.clearQueueFor(targetType, targetId, em);
    const running = await em.find(Deployment, { targetType, targetId, status: 'running' });
    for (const row of running) if (await this.#cancel(row, em)) stopped++;
    return stopped;
  }

  async clearQueueFor(targetType: DeploymentTargetType, targetId: string, em: EntityManager): Promise<number> {
    return em.nativeUpdate(Deployment, { targetType, targetId, status: 'queued' }, { status: 'cancelled', finishedAt: new Date() });
  }

  async removeFor(targetType: DeploymentTargetType, targetId: string, em: EntityManager, options: { includeActive?: boolean } = {}): Promise<void> {
    const rows = await em.find(
      Deployment,
      { targetType, targetId, ...(options.includeActive ? {} : { status: { $in: ['done', 'error', 'cancelled'] } }) },
      { fields: ['deploymentId', 'logPath', 'status'] },
    );
    if (!rows.length) return;
    await em.nativeDelete(Deployment, { deploymentId: { $in: rows.map(r => r.deploymentId) } });
    // A run of a deleted record stops without settling: its target is going away.
    await Promise.all(rows.filter(r => r.status === 'running').map(r => this.#queue().abort(r.deploymentId, 'superseded')));
    await Promise.all(rows.map(r => removeLog(r.logPath)));
  }

  // ------------------------------------------------------------ deployment.*
  async one(deploymentId: string, organizationId: string, em: EntityManager): Promise<DeploymentView> {
    return this.#view(await this.#find(deploymentId, organizationId, em));
  }

  /** The deployments of the workload identified by a kind's id field (deployment.all takes applicationId, allByCompose composeId). */
  async forIdField(idField: string, id: string, organizationId: string, em: EntityManager): Promise<DeploymentView[]> {
    const kind = this.#workloads.kinds().find(k => k.idField === idField);
    if (!kind) throw notFound('Workload');
    return this.forTarget(kind.kind, id, organizationId, em);
  }

  /** A target's deployments, newest first, once the target is known to belong to the organization. */
  async forTarget(targetType: DeploymentTargetType, targetId: string, organizationId: string, em: EntityManager): Promise<DeploymentView[]> {
    // A workload's owner is asked of its kind; other targets are judged by the records' organization.
    if (this.#workloads.kind(targetType)) await this.#workloads.owner(targetType, targetId, organizationId, em);
    const rows = await em.find(Deployment, { targetType, targetId }, { orderBy: newestFirst });
    // Without a resolver, the records say whose target it is.
    if (rows.length && rows.every(r => r.organizationId !== organizationId)) throw notFound(label(targetType));
    return this.#views(rows.filter(r => r.organizationId === organizationId));
  }

  /** The organization's deployments, newest first (at most `limit`). */
  /** The organization's latest deployments, newest first, each joined with its workload (allCentralized). */
  async all(organizationId: string, em: EntityManager, limit = 500) {
    const rows = await em.find(Deployment, { organizationId }, { orderBy: newestFirst, limit });
    return centralized(this.#views(rows), this.#workloads, this.#environments, organizationId, em);
  }

  /** The organization's unfinished deployments as the peer's queue jobs, newest first (queueList). */
  async queue(organizationId: string, em: EntityManager) {
    const rows = await em.find(Deployment, { organizationId, status: { $in: ['queued', 'running'] } }, { orderBy: newestFirst });
    return queueJobs(this.#views(rows), this.targets(), this.#workloads, this.#environments, organizationId, em);
  }

  /** The schemas of allCentralized's and queueList's entries (made once every plugin is set up). */
  centralizedSchemas() {
    // cast: viewSchema() is built from the kinds at run time; centralizedSchemas takes it as a plain object schema.
    return centralizedSchemas(this.#workloads.kinds(), this.viewSchema() as unknown as Parameters<typeof centralizedSchemas>[1]);
  }

  async readLogs(deploymentId: string, organizationId: string, tail: number, em: EntityManager): Promise<string> {
    const row = await this.#find(deploymentId, organizationId, em);
    return readTail(row.logPath, tail);
  }

  /** Stops one queued or running deployment; answers it as it ended. */
  async kill(deploymentId: string, organizationId: string, em: EntityManager): Promise<DeploymentView> {
    const row = await this.#find(deploymentId, organizationId, em);
    if (isFinished(row.status)) throw badRequest(`Deployment ${deploymentId} is not running: it is ${row.status}`);
    await this.#cancel(row, em);
    return this.one(deploymentId, organizationId, em.fork() as EntityManager);
  }

  /** Deletes one finished deployment and its log; answers it as it was. */
  async remove(deploymentId: string, organizationId: string, em: EntityManager): Promise<DeploymentView> {
    const row = await this.#find(deploymentId, organizationId, em);
    if (!isFinished(row.status)) throw badRequest(`Deployment ${deploymentId} is ${row.status}: stop it (deployment.killProcess) before removing it`);
    const view = this.#view(row);
    await em.nativeDelete(Deployment, { deploymentId, organizationId });
    await removeLog(row.logPath);
    return view;
  }

  /** Whether the caller's organization may see the deployment: its row, or NOT_FOUND. */
  async find(deploymentId: string, organizationId: string, em: EntityManager): Promise<DeploymentRecord> {
    return toRecord(await this.#find(deploymentId, organizationId, em));
  }

  /**
   * Queued → cancelled at once. Running here → aborted, and the run records its end and settles.
   * Running with no run in this process (another worker) → cancelled here, settled here; that
   * worker's heartbeat notices and stops.
   */
  async #cancel(row: DeploymentRow, em: EntityManager): Promise<boolean> {
    if (row.status === 'queued') {
      return (await em.nativeUpdate(Deployment, { deploymentId: row.deploymentId, status: 'queued' }, { status: 'cancelled', finishedAt: new Date() })) > 0;
    }
    if (row.status !== 'running') return false;
    if (await this.#queue().abort(row.deploymentId, 'cancelled')) return true;
    // The move and the settle commit together, as the queue's own end does.
    return em.transactional(async tx => {
      const moved = await tx.nativeUpdate(Deployment, { deploymentId: row.deploymentId, status: 'running' }, { status: 'cancelled', finishedAt: new Date() });
      if (moved) await this.#queue().settle(row, { status: 'cancelled', message: CANCELLED_MESSAGE }, tx as EntityManager);
      return moved > 0;
    });
  }

  async #find(deploymentId: string, organizationId: string, em: EntityManager): Promise<DeploymentRow> {
    const row = await em.findOne(Deployment, { deploymentId, organizationId });
    if (!row) throw notFound('Deployment');
    return row;
  }
}

const label = (kind: string) => kind.charAt(0).toUpperCase() + kind.slice(1);

/**
 * deployment.* for one request: the store confined to the caller's organization and the
 * request's unit of work. Registered request-scoped as `callerDeployments`; workload plugins
 * and the queue keep using the singleton `deployments` service.
 */
export const callerDeployments =
  (store: DeploymentStore) =>
  ({ principal, em }: Cradle) => {
    const organizationId = principal!.organizationId;
    return {
      /** One deployment. */
      one: (deploymentId: string) => store.one(deploymentId, organizationId, em),
      /** The deployments of the workload a kind's id field names, newest first. */
      forIdField: (idField: string, id: string) => store.forIdField(idField, id, organizationId, em),
      /** A target's deployments, newest first. */
      forTarget: (targetType: DeploymentTargetType, targetId: string) => store.forTarget(targetType, targetId, organizationId, em),
      /** The organization's latest deployments, newest first, joined with their workloads. */
      all: () => store.all(organizationId, em),
      /** The organization's unfinished deployments as queue jobs, newest first. */
      queue: () => store.queue(organizationId, em),
      /** The last `tail` lines of a deployment's log. */
      readLogs: (deploymentId: string, tail: number) => store.readLogs(deploymentId, organizationId, tail, em),
      /** Stops a queued or running deployment. */
      kill: (deploymentId: string) => store.kill(deploymentId, organizationId, em),
      /** Deletes a finished deployment and its log. */
      remove: (deploymentId: string) => store.remove(deploymentId, organizationId, em),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    /** deployment.* for the current request's caller (request scope only). */
    callerDeployments: ReturnType<ReturnType<typeof callerDeployments>>;
  }
}
