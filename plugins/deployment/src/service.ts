// Deployment records for workload plugins (the `deployments` contract), the queue and the live
// log, and what deployment.* (requests.ts) reads of them: the target types, the schemas, a
// deployment stopped. Another organization's deployment is NOT_FOUND, never FORBIDDEN.
import {
  CANCELLED_MESSAGE,
  newId,
  type BerthConfig,
  type Deployer,
  type DeploymentRecord,
  type DeploymentService,
  type DeploymentTargetType,
  type DeploymentTarget,
  type EnqueueRequest,
  type EntityManager,
  type TSchema,
  findOwned,
} from '@berth/core';
import { centralizedSchemas } from './centralized.ts';
import { Deployment, type DeploymentRow } from './entities.ts';
import { logPathFor, removeLog } from './log.ts';
import type { DeploymentQueue } from './queue.ts';
import { toRecord, toView } from './views.ts';
import { deploymentSchemas, peerTargets, type DeploymentView, type TargetField } from './schemas.ts';
import { type WorkloadRegistry } from '@berth/plugin-workloads';

export const newestFirst = { createdAt: 'desc', deploymentId: 'desc' } as const;

export class DeploymentStore implements DeploymentService {
  readonly #config: BerthConfig;
  readonly #queue: () => DeploymentQueue;
  readonly #workloads: WorkloadRegistry;
  readonly #deployers = new Map<string, Deployer>();
  /** Creation times strictly increase within the process, so FIFO order never depends on a tie. */
  #lastCreated = 0;
  /** Transactions that enqueued and are not committed yet (see onCommit). */
  readonly #uncommitted = new WeakSet<object>();

  constructor(config: BerthConfig, workloads: WorkloadRegistry, queue: () => DeploymentQueue) {
    this.#config = config;
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
      rollsBack: request.rollsBack ?? null,
      status: 'queued',
      action: request.action,
      targetType: request.targetType,
      targetId: request.targetId,
      organizationId: request.organizationId,
      serverId: request.serverId,
      buildServerId: null,
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
    for (const row of running) if (await this.cancel(row, em)) stopped++;
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

  // ------------------------------------------------------------ for deployment.*
  /** The schemas of allCentralized's and queueList's entries (made once every plugin is set up). */
  centralizedSchemas() {
    // cast: viewSchema() is built from the kinds at run time; centralizedSchemas takes it as a plain object schema.
    return centralizedSchemas(this.#workloads.kinds(), this.viewSchema() as unknown as Parameters<typeof centralizedSchemas>[1]);
  }

  /** Whether the caller's organization may see the deployment: its row, or NOT_FOUND (for the live log's route, stream.ts). */
  async find(deploymentId: string, organizationId: string, em: EntityManager): Promise<DeploymentRecord> {
    return toRecord(await this.#find(deploymentId, organizationId, em));
  }

  /**
   * Queued → cancelled at once. Running here → aborted, and the run records its end and settles.
   * Running with no run in this process (another worker) → cancelled here, settled here; that
   * worker's heartbeat notices and stops.
   */
  async cancel(row: DeploymentRow, em: EntityManager): Promise<boolean> {
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

  #find(deploymentId: string, organizationId: string, em: EntityManager): Promise<DeploymentRow> {
    return findOwned(em, Deployment, { deploymentId }, organizationId, 'Deployment');
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The deployment records as the deployment plugin's own requests use them (the same store as `deployments`). */
    deploymentStore: DeploymentStore;
  }
}
