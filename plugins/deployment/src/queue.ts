// The deploy queue. The `deployments` rows in status `queued` are the durable queue; Agenda
// jobs of one kind only wake a dispatcher, which claims the oldest deployment that may start
// (its target has nothing running or queued before it, its host is under its concurrency limit:
// this machine's as its operators set it, else deployConcurrency; a server's own), runs it, and
// looks for the next. Claims are serialised
// by a PostgreSQL advisory lock, so they hold across processes too. A process that dies leaves its rows `running`;
// the next boot marks them error (recover()).
import { CANCELLED_MESSAGE, type BerthConfig, type Cradle, type Deployer, type EntityManager, type EventBus, type JobScheduler, type Logger } from '@berth/core';
import { Deployment, type DeploymentRow } from './entities.ts';
import { DeploymentLog, removeLog } from './log.ts';
import { toRecord } from './views.ts';

export const DISPATCH_JOB = 'deployment.dispatch';
/** A periodic wake-up, in case one was lost (e.g. the process died between a record and its job). */
export const SWEEP_JOB = 'deployment.sweep';
/** pg_advisory_xact_lock key that serialises claims. */
const CLAIM_LOCK = 7262101;
/** Agenda's lock on a dispatch job: short, and touched while a deployment runs, so a dead worker's job is soon retried. */
export const JOB_LOCK_MS = 4_000;
const HEARTBEAT_MS = 1_000;
/** How long a graceful stop waits for aborted deployments to write their end. */
const SHUTDOWN_WAIT_MS = 5_000;

export const STOPPED_MESSAGE = 'Berth stopped while this deployment was running (the process exited or was killed)';
export const timeoutMessage = (seconds: number) => `Deployment timed out after ${seconds} s`;
/** The longest error message a deployment's record keeps (the log has the whole output). */
const MESSAGE_MAX = 8_000;

/**
 * An error message as PostgreSQL can store it: a text column refuses NUL bytes (the engine's log
 * frames carry them, and an error may quote them), which would leave the record `running`; other
 * control characters but tab and newline go too, and a very long message is cut.
 */
export function storableMessage(message: string): string {
  const clean = message.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '');
  return clean.length > MESSAGE_MAX ? `${clean.slice(0, MESSAGE_MAX)}… (cut; the log has the rest)` : clean;
}

/** Why a running deployment was aborted: each ends differently. */
type AbortReason = 'cancelled' | 'timeout' | 'shutdown' | 'superseded' | 'failed';
/** What the dispatcher needs of an Agenda job: keeping its lock while a deployment runs. */
type LockedJob = { touch(): Promise<void> };
type Outcome = { status: 'done' | 'error' | 'cancelled'; message: string | null };

interface Running {
  controller: AbortController;
  reason: AbortReason | null;
  /** Why a run aborted as 'failed' ended (the record's error message). */
  message?: string;
  /** Settles once the record holds its final status. */
  finished: Promise<void>;
}

export interface QueueDeps {
  config: BerthConfig;
  orm: () => Cradle['orm'];
  jobs: JobScheduler;
  events: EventBus;
  logger: () => Logger;
  deployer: (targetType: string) => Deployer | undefined;
  /** Each server's own limit of deployments at once, by serverId; others keep deployConcurrency. */
  serverLimits?: (em: EntityManager) => Promise<Record<string, number>>;
  /** This machine's limit as its operators set it (settings.updateBuildsConcurrency); absent: deployConcurrency. */
  localLimit?: (em: EntityManager) => Promise<number>;
}

export class DeploymentQueue {
  readonly #deps: QueueDeps;
  readonly #running = new Map<string, Running>();
  readonly #claims = new Set<Promise<string | null>>();
  #closing = false;

  constructor(deps: QueueDeps) {
    this.#deps = deps;
  }

  /** Registers the job kinds; called at plugin setup. */
  define(): void {
    const { jobs, config } = this.#deps;
    // Per-host limits are enforced by the claim; Agenda only needs room for every host's share.
    const options = { concurrency: 32, lockLifetimeMs: JOB_LOCK_MS };
    jobs.define(DISPATCH_JOB, (_data: unknown, job: LockedJob) => this.#dispatch(job), options);
    jobs.define(SWEEP_JOB, (_data: unknown, job: LockedJob) => this.#dispatch(job), options);
    if (config.jobs) jobs.every('1 minute', SWEEP_JOB);
  }

  /**
   * Puts a wake-up on the durable queue; whichever worker takes it claims what may run. Never
   * fails: a lost wake-up only delays the start until the periodic sweep or the next boot.
   */
  async wake(): Promise<void> {
    try {
      await this.#deps.jobs.now(DISPATCH_JOB, {});
    } catch (e) {
      this.#deps.logger().warn({ err: e }, 'could not queue a deployment wake-up');
    }
  }

  /**
   * Running in this process: aborts it for the reason and answers true once its record is
   * final; false when it does not run here. A claim still in flight is waited for, so a cancel
   * right after the claim is not mistaken for another process's run.
   */
  async abort(deploymentId: string, reason: AbortReason, message?: string): Promise<boolean> {
    if (!this.#running.has(deploymentId) && this.#claims.size) await Promise.allSettled([...this.#claims]);
    const running = this.#running.get(deploymentId);
    if (!running) return false;
    if (!running.controller.signal.aborted) {
      running.reason = reason;
      if (message !== undefined) running.message = message;
      running.controller.abort(new Error(message ?? reason));
    }
    await running.finished;
    return true;
  }

  /** Graceful stop: claim nothing more, abort what runs here and let each record its end. */
  async shutdown(): Promise<void> {
    this.#closing = true;
    // A claim already in flight may still take a deployment (it sees #closing only afterwards and
    // puts it back in the queue): wait for it, so that happens before the database closes. Else
    // the record stays `running` and the next start marks a deployment error that never ran.
    await Promise.allSettled([...this.#claims]);
    const pending = [...this.#running.keys()].map(id => this.abort(id, 'shutdown'));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(pending),
      new Promise(resolve => {
        timer = setTimeout(resolve, SHUTDOWN_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  /**
   * At boot: every deployment still `running` belongs to a process that died. Each becomes
   * error with the reason (also the log's last line) and its deployer settles the workload.
   */
  async recover(): Promise<number> {
    const em = this.#deps.orm().em.fork();
    const stale = await em.find(Deployment, { status: 'running' });
    for (const row of stale) {
      const log = new DeploymentLog(row.logPath);
      log.write(STOPPED_MESSAGE);
      await log.close();
      await this.#finish(row.deploymentId, { status: 'error', message: STOPPED_MESSAGE });
    }
    return stale.length;
  }

  // ------------------------------------------------------------ the dispatcher
  async #dispatch(job: LockedJob): Promise<void> {
    while (!this.#closing) {
      const claim = this.#claim();
      this.#claims.add(claim);
      let id: string | null;
      try {
        id = await claim;
      } finally {
        this.#claims.delete(claim);
      }
      if (!id) return;
      // Tracked before any other await, so abort() finds it (see abort()).
      const running = this.#track(id);
      if (this.#closing) {
        // Claimed while the process stops: back to the queue, for the next start.
        await this.#requeue(id);
        this.#running.delete(id);
        running.markFinished();
        return;
      }
      // Another slot may be free too (another host, or a limit above one): wake a second worker.
      await this.wake();
      await this.#execute(id, running, job);
    }
  }

  /** Atomically takes the next deployment that may start; its id, or null. */
  async #claim(): Promise<string | null> {
    const limit = this.#deps.config.deployConcurrency;
    const em = this.#deps.orm().em.fork();
    // Read at every claim: a limit changed through the API applies to the next deployment that starts.
    const local = (await this.#deps.localLimit?.(em as EntityManager)) ?? limit;
    const perServer = JSON.stringify((await this.#deps.serverLimits?.(em as EntityManager)) ?? {});
    return em.transactional(async tx => {
      const conn = tx.getConnection();
      const ctx = tx.getTransactionContext();
      await conn.execute('select pg_advisory_xact_lock(?)', [CLAIM_LOCK], 'all', ctx);
      const rows = await conn.execute<{ deployment_id: string }[]>(
        // Never before the record's own creation: the time is taken before this statement sees the
        // row, and an enqueue committed in between may have stamped its creation a moment later.
        `update deployments set status = 'running', started_at = greatest(?::timestamptz, created_at)
          where status = 'queued' and deployment_id = (
            select d.deployment_id from deployments d
             where d.status = 'queued'
               and not exists (select 1 from deployments o
                                where o.target_type = d.target_type and o.target_id = d.target_id
                                  and (o.status = 'running' or (o.status = 'queued' and (o.created_at, o.deployment_id) < (d.created_at, d.deployment_id))))
               and (select count(*) from deployments h where h.status = 'running' and h.server_id is not distinct from d.server_id)
                   < case when d.server_id is null then ?::int else coalesce((?::jsonb ->> d.server_id)::int, ?) end
             order by d.created_at, d.deployment_id
             limit 1)
        returning deployment_id`,
        [new Date(), local, perServer, limit],
        'all',
        ctx,
      );
      return rows[0]?.deployment_id ?? null;
    });
  }

  async #requeue(deploymentId: string): Promise<void> {
    await this.#deps
      .orm()
      .em.fork()
      .nativeUpdate(Deployment, { deploymentId, status: 'running' }, { status: 'queued', startedAt: null })
      .catch(e => this.#deps.logger().warn({ err: e, deploymentId }, 'could not put a deployment back in the queue; the next start marks it error'));
  }

  #track(deploymentId: string): Running & { markFinished: () => void } {
    let markFinished!: () => void;
    const finished = new Promise<void>(r => {
      markFinished = r;
    });
    const running = { controller: new AbortController(), reason: null, finished, markFinished };
    this.#running.set(deploymentId, running);
    return running;
  }

  async #execute(deploymentId: string, running: Running & { markFinished: () => void }, job: LockedJob | undefined): Promise<void> {
    const { orm, config } = this.#deps;
    const { controller } = running;
    const row = await orm()
      .em.fork()
      .findOne(Deployment, { deploymentId })
      .catch(() => null);
    if (!row) {
      this.#running.delete(deploymentId);
      running.markFinished();
      return;
    }
    const record = toRecord(row);
    const log = new DeploymentLog(row.logPath);
    const timer = setTimeout(() => void this.abort(deploymentId, 'timeout'), config.deployTimeoutSeconds * 1000);
    const heartbeat = setInterval(() => void this.#heartbeat(deploymentId, job), HEARTBEAT_MS);
    let outcome: Outcome;
    try {
      const deployer = this.#deps.deployer(row.targetType);
      if (!deployer) throw new Error(`No deployer runs "${row.targetType}" deployments (is the plugin that owns them enabled?)`);
      // Cancelled between the claim and here: never start the deployer.
      controller.signal.throwIfAborted();
      const aborted = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }));
      const work = Promise.resolve().then(() =>
        deployer.run(row.action, {
          deployment: record,
          signal: controller.signal,
          log: line => log.write(line),
          redact: secret => log.redactor.add(secret),
          em: orm().em.fork() as EntityManager,
          buildsOn: async serverId => {
            await orm().em.fork().nativeUpdate(Deployment, { deploymentId }, { buildServerId: serverId });
          },
        }),
      );
      // A deployer that ignores its signal keeps running detached; its late failure is not ours to report.
      work.catch(() => {});
      await Promise.race([work, aborted]);
      outcome = { status: 'done', message: null };
    } catch (e) {
      outcome = this.#outcomeOf(running.reason, e, log, running.message);
    } finally {
      clearTimeout(timer);
      clearInterval(heartbeat);
    }
    try {
      if (outcome.message) log.write(outcome.message);
      await log.close();
      if (running.reason !== 'superseded') await this.#finish(deploymentId, outcome);
    } catch (e) {
      this.#deps.logger().error({ err: e, deploymentId }, 'could not record the end of a deployment');
      // Never left `running`: the end is recorded without the message that could not be stored.
      if (running.reason !== 'superseded') {
        await this.#finish(deploymentId, {
          status: outcome.status,
          message: outcome.status === 'error' ? 'Deployment failed (its error message could not be recorded; see the log)' : outcome.message,
        }).catch(again => this.#deps.logger().error({ err: again, deploymentId }, 'could not record the end of a deployment, twice'));
      }
    } finally {
      this.#running.delete(deploymentId);
      running.markFinished();
    }
  }

  #outcomeOf(reason: AbortReason | null, error: unknown, log: DeploymentLog, message?: string): Outcome {
    switch (reason) {
      case 'failed':
        return { status: 'error', message: storableMessage(log.redactor.apply(message ?? 'Deployment failed')) };
      case 'cancelled':
        return { status: 'cancelled', message: CANCELLED_MESSAGE };
      case 'timeout':
        return { status: 'error', message: timeoutMessage(this.#deps.config.deployTimeoutSeconds) };
      case 'shutdown':
        return { status: 'error', message: STOPPED_MESSAGE };
      case 'superseded':
        return { status: 'cancelled', message: CANCELLED_MESSAGE };
      default: {
        const message = error instanceof Error ? error.message : String(error);
        return { status: 'error', message: storableMessage(log.redactor.apply(message || 'Deployment failed')) };
      }
    }
  }

  /** Keeps the Agenda lock of a long run, and notices a cancel or removal made by another process. */
  async #heartbeat(deploymentId: string, job: LockedJob | undefined): Promise<void> {
    const log = this.#deps.logger();
    await job?.touch().catch(e => log.warn({ err: e, deploymentId }, 'could not extend the lock of a deployment job'));
    try {
      const row = await this.#deps
        .orm()
        .em.fork()
        .findOne(Deployment, { deploymentId }, { fields: ['status'] });
      if (!row || row.status !== 'running') void this.abort(deploymentId, 'superseded');
    } catch (e) {
      log.warn({ err: e, deploymentId }, 'could not check a running deployment');
    }
  }

  /**
   * Moves a running deployment to its end (only if it is still running: whoever makes the
   * move settles), then announces it and applies retention. The move and the deployer's settle
   * commit together: whoever reads the deployment ended reads its workload settled too.
   */
  async #finish(deploymentId: string, outcome: Outcome): Promise<void> {
    const row = await this.#deps
      .orm()
      .em.fork()
      .transactional(async em => {
        const moved = await em.nativeUpdate(
          Deployment,
          { deploymentId, status: 'running' },
          { status: outcome.status, errorMessage: outcome.status === 'error' ? outcome.message : null, finishedAt: new Date() },
        );
        if (!moved) return null;
        const row = await em.findOneOrFail(Deployment, { deploymentId });
        await this.settle(row, outcome, em as EntityManager);
        return row;
      });
    if (!row) return;
    this.#deps.events.emit('deploymentFinished', { deployment: toRecord(row) });
    await this.applyRetention(row.targetType, row.targetId);
  }

  /**
   * The deployer restores its workload's status after an end it did not record itself — in the
   * transaction that moved the deployment (a savepoint: a settle that fails is logged and undone,
   * the move stays).
   */
  async settle(row: DeploymentRow, outcome: Outcome, em: EntityManager): Promise<void> {
    const { status, message } = outcome;
    if (status === 'done') return;
    const deployer = this.#deps.deployer(row.targetType);
    if (!deployer) return;
    try {
      await em.transactional(inner => deployer.settle(row.targetId, status, message ?? CANCELLED_MESSAGE, inner as EntityManager));
    } catch (e) {
      this.#deps.logger().error({ err: e, deploymentId: row.deploymentId }, 'the deployer could not settle its workload');
    }
  }

  /** Keeps the newest config.deploymentsKept finished deployments of the target; removes older records and logs. */
  async applyRetention(targetType: string, targetId: string): Promise<void> {
    const em = this.#deps.orm().em.fork();
    const old = await em.find(
      Deployment,
      { targetType, targetId, status: { $in: ['done', 'error', 'cancelled'] } },
      { orderBy: { createdAt: 'desc', deploymentId: 'desc' }, offset: this.#deps.config.deploymentsKept, fields: ['deploymentId', 'logPath'] },
    );
    if (!old.length) return;
    await em.nativeDelete(Deployment, { deploymentId: { $in: old.map(d => d.deploymentId) } });
    await Promise.all(old.map(d => removeLog(d.logPath)));
  }
}
