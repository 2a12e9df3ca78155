// Reachability: every serverProbeSeconds each active server with a key is probed (its own, or its
// organization's default key when it names none; one with neither is left alone): its engine is
// pinged over its pooled connection, with a time limit. The probe only connects and reads: the
// engine is taken as it is (hosts.asIs), never prepared, so a server not set up yet (or a build
// server) is not put in swarm mode nor given the platform network by being pinged; server.setup
// or the first deploy prepare it. Two failed probes in a row make it
// unreachable: its running deployments fail with the reason and `serverUnreachable` is emitted
// once; the first probe that answers again emits `serverReachable`. The counters live on the
// record, so the moves are decided once even with several Berth processes. The job only starts a
// sweep (its lock stays short); a sweep still going when the next tick comes is not doubled.
import { optionalService, type Cradle, type EntityManager, type JobScheduler } from '@berth/core';
import { Server, type ServerRow } from './entities.ts';

export const PROBE_JOB = 'server.probe';
/** Failed probes in a row after which a server is unreachable. */
export const UNREACHABLE_AFTER = 2;

export class ServerProbe {
  readonly #cradle: () => Cradle;
  readonly #seconds: number;
  #sweep: Promise<void> | undefined;

  constructor(cradle: () => Cradle, seconds: number) {
    this.#cradle = cradle;
    this.#seconds = seconds;
  }

  /** How long one probe may take: the interval, within 3 to 15 seconds. */
  get timeoutMs(): number {
    return Math.min(15_000, Math.max(3_000, this.#seconds * 1000));
  }

  define(jobs: JobScheduler, repeat: boolean): void {
    jobs.define(
      PROBE_JOB,
      async () => {
        void this.sweep();
      },
      { concurrency: 1, lockLifetimeMs: 5_000 },
    );
    if (repeat) jobs.every(`${this.#seconds} seconds`, PROBE_JOB);
  }

  /** Probes every server with a key to log in with (one sweep at a time); resolves when the sweep ends. */
  sweep(): Promise<void> {
    this.#sweep ??= this.#sweepAll()
      .catch(e => this.#cradle().logger.warn({ err: e }, 'the server probe failed'))
      .finally(() => {
        this.#sweep = undefined;
      });
    return this.#sweep;
  }

  async #sweepAll(): Promise<void> {
    const em = this.#cradle().orm.em.fork() as EntityManager;
    const rows = await em.find(Server, { serverStatus: 'active' });
    const defaultKey = new Map<string, Promise<boolean>>();
    const hasKey = (row: ServerRow) => {
      if (row.sshKeyId) return true;
      if (!defaultKey.has(row.organizationId)) defaultKey.set(row.organizationId, this.#cradle().hosts.defaultKeys.has(row.organizationId));
      return defaultKey.get(row.organizationId)!;
    };
    await Promise.all(rows.map(async row => (await hasKey(row)) && this.probe(row)));
  }

  /** One probe of one server, and what follows from its answer. */
  async probe(row: ServerRow): Promise<void> {
    const failure = await this.#ping(row.serverId);
    if (failure === null) await this.#answered(row);
    else await this.#failed(row, failure);
  }

  /** null when the engine answered in time, else why not. */
  async #ping(serverId: string): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<string>(resolve => {
      timer = setTimeout(() => resolve(`no answer within ${this.timeoutMs / 1000} s`), this.timeoutMs);
    });
    const ping = (async () => {
      await (await this.#cradle().hosts.asIs(serverId)).ping();
      return null;
    })().catch((e: Error) => e.message || String(e));
    try {
      return await Promise.race([ping, limit]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #answered(row: ServerRow): Promise<void> {
    const em = this.#cradle().orm.em.fork();
    if (row.failedProbes) await em.nativeUpdate(Server, { serverId: row.serverId }, { failedProbes: 0 });
    // Whoever clears the mark announces the return.
    const back = await em.nativeUpdate(Server, { serverId: row.serverId, unreachableSince: { $ne: null } }, { unreachableSince: null, failedProbes: 0 });
    if (back) {
      this.#cradle().logger.info({ serverId: row.serverId }, 'server reachable again');
      this.#cradle().events.emit('serverReachable', { organizationId: row.organizationId, serverId: row.serverId, serverName: row.name, at: new Date().toISOString() });
    }
  }

  async #failed(row: ServerRow, why: string): Promise<void> {
    const em = this.#cradle().orm.em.fork() as EntityManager;
    const [counted] = await em.execute<{ failed_probes: number }[]>('update "servers" set "failed_probes" = "failed_probes" + 1 where "server_id" = ? returning "failed_probes"', [row.serverId]);
    if (!counted || counted.failed_probes < UNREACHABLE_AFTER) return;
    // A connection that stopped answering is dropped: the next probe (and the next use) connects anew.
    void this.#cradle()
      .hosts.forget(row.serverId)
      .catch(() => undefined);
    const marked = await em.nativeUpdate(Server, { serverId: row.serverId, unreachableSince: null }, { unreachableSince: new Date() });
    if (!marked) return;
    const reason = `Server ${row.name} (${row.ipAddress}) is unreachable: ${why}`;
    this.#cradle().logger.warn({ serverId: row.serverId, reason }, 'server unreachable');
    await optionalService(this.#cradle(), 'deployments')
      ?.failRunningOn(row.serverId, reason, em)
      .catch(e => this.#cradle().logger.warn({ err: e, serverId: row.serverId }, 'could not fail the deployments of an unreachable server'));
    this.#cradle().events.emit('serverUnreachable', { organizationId: row.organizationId, serverId: row.serverId, serverName: row.name, reason, at: new Date().toISOString() });
  }
}

declare module '@berth/core' {
  interface BerthEvents {
    /** A server stopped answering: two probes in a row failed (reason says why); emitted once until it answers again. */
    serverUnreachable: { organizationId: string; serverId: string; serverName: string; reason: string; at: string };
    /** A server answers again after serverUnreachable. */
    serverReachable: { organizationId: string; serverId: string; serverName: string; at: string };
  }
}
