// The servers of an organization as other plugins read them: the hosts plugin's directory
// (hostServers: the record with its key decrypted in memory, the host key pinned on first use), the
// workloads that live on a server, the check that refuses a deploy to an inactive server, the
// checks a new server passes. A record of another organization is NOT_FOUND, never FORBIDDEN.
// server.* is requests.ts.
import { conflict, iso, optionalService, type Cradle, type EnqueueRequest, type EntityManager, findOwned } from '@berth/core';
import type { DirectoryServer, HostServerDirectory } from '@berth/plugin-hosts';
import type { WorkloadServers } from '@berth/plugin-workloads';
import { Server, type ServerRow } from './entities.ts';
import { ServerView } from './schemas.ts';

/** A workload that lives on a server. */
export interface WorkloadOnServer {
  kind: string;
  id: string;
  name: string;
}

export const newestFirst = { createdAt: 'desc', serverId: 'asc' } as const;

export const toView = (s: ServerRow): ServerView => ({
  serverId: s.serverId,
  name: s.name,
  description: s.description ?? null,
  ipAddress: s.ipAddress,
  port: s.port,
  username: s.username,
  appName: s.appName,
  enableDockerCleanup: s.enableDockerCleanup,
  buildsConcurrency: s.buildsConcurrency,
  createdAt: iso(s.createdAt)!,
  organizationId: s.organizationId,
  serverStatus: s.serverStatus as ServerView['serverStatus'],
  serverType: s.serverType as ServerView['serverType'],
  command: s.command,
  sshKeyId: s.sshKeyId ?? null,
  metricsConfig: s.metricsConfig as ServerView['metricsConfig'],
  hostKeyFingerprint: s.hostKeyFingerprint ?? null,
});

/** What lifts an inactive server's reason (a reason another plugin holds, billing's the only one today). */
export const heldBy = (reason: string) =>
  reason === 'billing'
    ? "pay the organization's open invoice (billing.createCustomerPortalSession) or buy more servers (billing.createCheckoutSession), or remove servers, and billing sets it active again"
    : `${reason} sets it active again`;

export class ServerService implements HostServerDirectory, WorkloadServers {
  readonly #cradle: () => Cradle;
  readonly #createChecks: ((organizationId: string, em: EntityManager) => Promise<void>)[] = [];

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
  }

  // ------------------------------------------------------------ for the hosts plugin
  /** The server's connection details, its key decrypted (held in memory only); null when there is no such server. */
  async server(serverId: string): Promise<DirectoryServer | null> {
    const em = this.#cradle().orm.em.fork() as EntityManager;
    const row = await em.findOne(Server, { serverId });
    if (!row) return null;
    const privateKey = row.sshKeyId
      ? await this.#cradle()
          .sshKeys.privateKey(row.sshKeyId, row.organizationId, em)
          .catch(() => null)
      : null;
    return {
      serverId: row.serverId,
      ipAddress: row.ipAddress,
      port: row.port,
      username: row.username,
      privateKey,
      // No key of its own: the hosts plugin connects with the organization's default key.
      sshKeyId: row.sshKeyId ?? null,
      organizationId: row.organizationId,
      hostKeyFingerprint: row.hostKeyFingerprint ?? null,
      onHostKeyPinned: fingerprint => void this.#pin(serverId, fingerprint),
    };
  }

  /** The organization of a server (null: no such server), for the workloads' placement check. */
  async organizationOf(serverId: string): Promise<string | null> {
    const row = await this.#cradle()
      .orm.em.fork()
      .findOne(Server, { serverId }, { fields: ['organizationId'] });
    return row?.organizationId ?? null;
  }

  /** Stores the fingerprint pinned on first use (only when none is pinned: an accepted key is never overwritten). */
  async #pin(serverId: string, fingerprint: string): Promise<void> {
    try {
      await this.#cradle().orm.em.fork().nativeUpdate(Server, { serverId, hostKeyFingerprint: null }, { hostKeyFingerprint: fingerprint });
    } catch (e) {
      this.#cradle().logger.warn({ err: e, serverId }, 'could not store the pinned host key');
    }
  }

  // ------------------------------------------------------------ for other plugins
  /** Refuses (CONFLICT, naming the server) a deployment on an inactive server. */
  async checkDeployable(request: EnqueueRequest, em: EntityManager): Promise<void> {
    if (!request.serverId) return;
    const row = await em.findOne(Server, { serverId: request.serverId }, { fields: ['name', 'serverStatus', 'inactiveReason'] });
    if (row?.serverStatus === 'inactive') {
      const until = row.inactiveReason ? heldBy(row.inactiveReason) : 'server.update with serverStatus "active"';
      throw conflict(`Server ${row.name} (${request.serverId}) is inactive: nothing is deployed there until it is active again (${until})`);
    }
  }

  /**
   * Sets a server inactive on behalf of `reason` (billing), so that server.update cannot set it
   * active again, or active again when `reason` set it inactive (the reason cleared). Answers
   * whether the record changed; NOT_FOUND for another organization's.
   */
  async setStatusFor(reason: string, serverId: string, organizationId: string, serverStatus: 'active' | 'inactive', em: EntityManager): Promise<boolean> {
    const row = await this.#find(serverId, organizationId, em);
    if (serverStatus === 'inactive') {
      if (row.serverStatus === 'inactive' && row.inactiveReason === reason) return false;
      row.serverStatus = 'inactive';
      row.inactiveReason = reason;
    } else {
      if (row.inactiveReason !== reason) return false;
      row.serverStatus = 'active';
      row.inactiveReason = null;
    }
    await em.flush();
    return true;
  }

  /** Adds a check that may refuse an organization's new server before it is stored (billing's quota). */
  checkBeforeCreate(check: (organizationId: string, em: EntityManager) => Promise<void>): void {
    this.#createChecks.push(check);
  }

  /**
   * Runs `insert` (server.create's, storing an organization's new server) past the checks added by
   * checkBeforeCreate; in `em` itself when there are none.
   */
  async createChecked(organizationId: string, em: EntityManager, insert: (em: EntityManager) => Promise<ServerRow>): Promise<ServerRow> {
    if (!this.#createChecks.length) return insert(em);
    // The checks (billing's quota) and the insert hold the organization's lock together: of
    // concurrent creates past the quota, exactly those it allows are stored.
    return em.transactional(async tx => {
      await tx.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', [`server.create:${organizationId}`], 'all', tx.getTransactionContext());
      for (const check of this.#createChecks) await check(organizationId, tx);
      return insert(tx);
    });
  }

  /** The organization's server as the API answers it; NOT_FOUND for another organization's (for a workload that names a serverId). */
  async owned(serverId: string, organizationId: string, em: EntityManager): Promise<ServerView> {
    return toView(await this.#find(serverId, organizationId, em));
  }

  /** Stores the server's metricsConfig (the monitoring plugin's setupMonitoring); NOT_FOUND for another organization's. */
  async setMetricsConfig(serverId: string, organizationId: string, metricsConfig: Record<string, unknown>, em: EntityManager): Promise<ServerView> {
    const row = await this.#find(serverId, organizationId, em);
    row.metricsConfig = metricsConfig;
    await em.flush();
    return toView(row);
  }

  /** The schema of a workload's `server` relation (the record as server.one answers it, no key material). */
  relationSchema(): typeof ServerView {
    return ServerView;
  }

  /** The server a workload's serverId names, as the workload's answers join it; null without one or for another organization's. */
  async relation(serverId: unknown, organizationId: string, em: EntityManager): Promise<ServerView | null> {
    if (typeof serverId !== 'string' || !serverId) return null;
    const row = await em.findOne(Server, { serverId, organizationId });
    return row ? toView(row) : null;
  }

  /** The active servers whose daily Docker cleanup is on (the cleanup plugin's schedule). */
  async dockerCleanupServers(em: EntityManager): Promise<{ serverId: string; name: string; organizationId: string }[]> {
    const rows = await em.find(Server, { enableDockerCleanup: true, serverStatus: 'active' }, { fields: ['serverId', 'name', 'organizationId'], orderBy: { serverId: 'asc' } });
    return rows.map(r => ({ serverId: r.serverId, name: r.name, organizationId: r.organizationId }));
  }

  /** Turns a server's daily cleanup on or off; NOT_FOUND (nothing written) for another organization's. */
  async setDockerCleanup(serverId: string, organizationId: string, enabled: boolean, em: EntityManager): Promise<void> {
    const row = await this.#find(serverId, organizationId, em);
    row.enableDockerCleanup = enabled;
    await em.flush();
  }

  /** Each server's buildsConcurrency (deployments at once on it), by serverId. */
  async buildLimits(em: EntityManager): Promise<Record<string, number>> {
    const rows = await em.find(Server, {}, { fields: ['serverId', 'buildsConcurrency'] });
    return Object.fromEntries(rows.map(r => [r.serverId, r.buildsConcurrency]));
  }

  /** Every workload (application, database, compose stack: each registered kind) whose record names the server. */
  async workloadsOn(serverId: string, em: EntityManager): Promise<WorkloadOnServer[]> {
    const registry = optionalService(this.#cradle(), 'workloads');
    const out: WorkloadOnServer[] = [];
    for (const kind of registry?.kinds() ?? []) {
      // casts: a kind's entity and its metadata are known only at run time (its plugin registers them).
      const entity = kind.listSource?.entity as never;
      if (!entity) continue;
      const meta = em.getMetadata().find(entity) as unknown as { primaryKeys: string[]; properties: Record<string, unknown> } | undefined;
      if (!meta?.properties.serverId || meta.primaryKeys.length !== 1) continue;
      const key = meta.primaryKeys[0]!;
      // casts: as above
      const rows = (await em.find(entity, { serverId } as never, { orderBy: { [key]: 'asc' } as never })) as Record<string, unknown>[];
      out.push(...rows.map(r => ({ kind: kind.kind, id: String(r[key]), name: String(r.name ?? r[key]) })));
    }
    return out;
  }

  /** The organization's servers, newest first, each with the number of workloads on it. */
  async all(organizationId: string, em: EntityManager) {
    const rows = await em.find(Server, { organizationId }, { orderBy: newestFirst });
    return Promise.all(rows.map(async r => ({ ...toView(r), totalSum: (await this.workloadsOn(r.serverId, em)).length })));
  }

  async count(organizationId: string, em: EntityManager): Promise<number> {
    return em.count(Server, { organizationId });
  }

  /** The organization's servers (id, name, address, type), newest first: for granting members access. */
  async forPermissions(organizationId: string, em: EntityManager) {
    const rows = await em.find(Server, { organizationId }, { orderBy: newestFirst });
    return rows.map(r => ({ serverId: r.serverId, name: r.name, ipAddress: r.ipAddress, serverType: r.serverType as ServerView['serverType'] }));
  }

  #find(serverId: string, organizationId: string, em: EntityManager): Promise<ServerRow> {
    return findOwned(em, Server, { serverId }, organizationId, 'Server');
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The server records as other plugins read them (the hosts plugin's directory among them); from the server plugin. server.* is `serverRequests`. */
    servers: ServerService;
  }
}
