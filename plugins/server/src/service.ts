// The servers of an organization (server.*), and what other plugins read of them: the hosts
// plugin's directory (hostServers: the record with its key decrypted in memory, the host key
// pinned on first use), the workloads that live on a server, the check that refuses a deploy to an
// inactive server. A record of another organization is NOT_FOUND, never FORBIDDEN.
import { randomBytes } from 'node:crypto';
import { BerthError, conflict, iso, newId, notFound, optionalService, type Cradle, type EnqueueRequest, type EntityManager, type SshKeySummary } from '@berth/core';
import type { DirectoryServer, HostServerDirectory } from '@berth/plugin-hosts';
import { Server, type ServerRow } from './entities.ts';
import { DEFAULT_METRICS_CONFIG, ServerView, type CreateInput, type UpdateInput } from './schemas.ts';

/** A workload that lives on a server. */
export interface WorkloadOnServer {
  kind: string;
  id: string;
  name: string;
}

const newestFirst = { createdAt: 'desc', serverId: 'asc' } as const;

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
const heldBy = (reason: string) =>
  reason === 'billing'
    ? "pay the organization's open invoice (billing.createCustomerPortalSession) or buy more servers (billing.createCheckoutSession), or remove servers, and billing sets it active again"
    : `${reason} sets it active again`;

/** What changes how Berth reaches the server: a change closes its pooled connection. */
const CONNECTION_FIELDS = ['ipAddress', 'port', 'username', 'sshKeyId', 'hostKeyFingerprint'] as const;

export class ServerService implements HostServerDirectory {
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

  // ------------------------------------------------------------ server.*
  async create(input: CreateInput, organizationId: string, em: EntityManager): Promise<ServerView> {
    const sshKeyId = input.sshKeyId || null;
    if (sshKeyId) await this.#key(sshKeyId, organizationId, em);
    if (!this.#createChecks.length) return toView(await this.#insert(input, sshKeyId, organizationId, em));
    // The checks (billing's quota) and the insert hold the organization's lock together: of
    // concurrent creates past the quota, exactly those it allows are stored.
    const row = await em.transactional(async tx => {
      await tx.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', [`server.create:${organizationId}`], 'all', tx.getTransactionContext());
      for (const check of this.#createChecks) await check(organizationId, tx);
      return this.#insert(input, sshKeyId, organizationId, tx);
    });
    return toView(row);
  }

  async #insert(input: CreateInput, sshKeyId: string | null, organizationId: string, em: EntityManager): Promise<ServerRow> {
    const row = em.create(Server, {
      serverId: newId(),
      name: input.name,
      description: input.description ?? null,
      ipAddress: input.ipAddress,
      port: input.port,
      username: input.username || 'root',
      appName: `server-${randomBytes(3).toString('hex')}`,
      enableDockerCleanup: input.enableDockerCleanup ?? true,
      buildsConcurrency: 1,
      serverStatus: 'active',
      inactiveReason: null,
      serverType: input.serverType ?? 'deploy',
      command: '',
      sshKeyId,
      hostKeyFingerprint: input.hostKeyFingerprint || null,
      metricsConfig: structuredClone(DEFAULT_METRICS_CONFIG),
      organizationId,
      failedProbes: 0,
      unreachableSince: null,
      createdAt: new Date(),
    });
    await em.flush();
    return row;
  }

  /** The record with its own deployments (setup runs) and its key (never the private half). */
  async one(serverId: string, organizationId: string, em: EntityManager) {
    return this.#detail(await this.#find(serverId, organizationId, em), em);
  }

  /** Newest first, each with the number of workloads on it. */
  async all(organizationId: string, em: EntityManager) {
    const rows = await em.find(Server, { organizationId }, { orderBy: newestFirst });
    return Promise.all(rows.map(async r => ({ ...toView(r), totalSum: (await this.workloadsOn(r.serverId, em)).length })));
  }

  async count(organizationId: string, em: EntityManager): Promise<number> {
    return em.count(Server, { organizationId });
  }

  /** Servers of a type that have a key (withSSHKey: deploy servers; buildServers: build servers), newest first. */
  async ofType(serverType: 'deploy' | 'build', organizationId: string, em: EntityManager): Promise<ServerView[]> {
    const rows = await em.find(Server, { organizationId, serverType, sshKeyId: { $ne: null } }, { orderBy: newestFirst });
    return rows.map(toView);
  }

  async forPermissions(organizationId: string, em: EntityManager) {
    const rows = await em.find(Server, { organizationId }, { orderBy: newestFirst });
    return rows.map(r => ({ serverId: r.serverId, name: r.name, ipAddress: r.ipAddress, serverType: r.serverType as ServerView['serverType'] }));
  }

  async update(input: UpdateInput, organizationId: string, em: EntityManager): Promise<ServerView> {
    const row = await this.#find(input.serverId, organizationId, em);
    const before = CONNECTION_FIELDS.map(f => row[f] ?? null);
    if (input.sshKeyId) await this.#key(input.sshKeyId, organizationId, em);
    if (input.name !== undefined) row.name = input.name;
    if (input.description !== undefined) row.description = input.description;
    if (input.ipAddress !== undefined) row.ipAddress = input.ipAddress;
    if (input.port !== undefined) row.port = input.port;
    if (input.username !== undefined) row.username = input.username;
    if (input.sshKeyId !== undefined) row.sshKeyId = input.sshKeyId || null;
    if (input.serverType !== undefined) row.serverType = input.serverType;
    if (input.enableDockerCleanup !== undefined) row.enableDockerCleanup = input.enableDockerCleanup;
    if (input.command !== undefined) row.command = input.command;
    // A server set inactive by billing stays so until billing says otherwise: the other fields of the
    // call are stored all the same (the peer's forms send the whole record), then the 409 names the field.
    const held = input.serverStatus === 'active' && row.serverStatus === 'inactive' && row.inactiveReason ? row.inactiveReason : null;
    if (input.serverStatus !== undefined && !held) {
      row.serverStatus = input.serverStatus;
      if (input.serverStatus === 'active') row.inactiveReason = null;
    }
    if (input.hostKeyFingerprint !== undefined) row.hostKeyFingerprint = input.hostKeyFingerprint || null;
    await em.flush();
    // The pooled connection holds the former address, login, key or pinned host key: the next use connects anew.
    if (CONNECTION_FIELDS.some((f, i) => (row[f] ?? null) !== before[i])) await this.#forget(row.serverId);
    if (held) {
      const message = `Server ${row.name} was set inactive by ${held} and stays so until ${held} sets it active again: ${heldBy(held)}`;
      throw new BerthError('CONFLICT', message, [{ path: ['serverStatus'], message: `serverStatus: ${message}` }]);
    }
    return toView(row);
  }

  async updateBuildsConcurrency(serverId: string, buildsConcurrency: number, organizationId: string, em: EntityManager): Promise<ServerView> {
    const row = await this.#find(serverId, organizationId, em);
    row.buildsConcurrency = buildsConcurrency;
    await em.flush();
    return toView(row);
  }

  /** Deletes the server, refused (CONFLICT, listing them) while workloads live there; answers it as it was. */
  async remove(serverId: string, organizationId: string, em: EntityManager) {
    const row = await this.#find(serverId, organizationId, em);
    const workloads = await this.workloadsOn(serverId, em);
    if (workloads.length) {
      throw conflict(`Server ${row.name} still runs ${workloads.length} workload(s): ${workloads.map(w => `${w.kind} ${w.name} (${w.id})`).join(', ')}. Remove them (or move them) first`);
    }
    const detail = await this.#detail(row, em);
    await optionalService(this.#cradle(), 'deployments')?.removeFor('server', serverId, em, { includeActive: true });
    await em.nativeDelete(Server, { serverId, organizationId });
    await this.#forget(serverId);
    return detail;
  }

  async #detail(row: ServerRow, em: EntityManager) {
    const deployments = optionalService(this.#cradle(), 'deployments');
    const records = (await deployments?.listFor('server', [row.serverId], em))?.get(row.serverId) ?? [];
    let sshKey: SshKeySummary | null = null;
    if (row.sshKeyId)
      sshKey = await this.#cradle()
        .sshKeys.one(row.sshKeyId, row.organizationId, em)
        .catch(e => {
          if (e instanceof BerthError && e.code === 'NOT_FOUND') return null;
          throw e;
        });
    return { ...toView(row), deployments: deployments?.views(records) ?? [], sshKey };
  }

  /** A key of the organization, else NOT_FOUND naming it. */
  async #key(sshKeyId: string, organizationId: string, em: EntityManager): Promise<void> {
    await this.#cradle().sshKeys.one(sshKeyId, organizationId, em);
  }

  async #forget(serverId: string): Promise<void> {
    await this.#cradle().hosts.forget(serverId);
  }

  async #find(serverId: string, organizationId: string, em: EntityManager): Promise<ServerRow> {
    const row = await em.findOne(Server, { serverId, organizationId });
    if (!row) throw notFound('Server');
    return row;
  }
}

/** server.* for one request: the service confined to the caller's organization and the request's unit of work. */
export const callerServers =
  (servers: ServerService) =>
  ({ principal, em }: Cradle) => {
    const organizationId = principal!.organizationId;
    return {
      create: (input: CreateInput) => servers.create(input, organizationId, em),
      one: (serverId: string) => servers.one(serverId, organizationId, em),
      all: () => servers.all(organizationId, em),
      count: () => servers.count(organizationId, em),
      ofType: (serverType: 'deploy' | 'build') => servers.ofType(serverType, organizationId, em),
      forPermissions: () => servers.forPermissions(organizationId, em),
      update: (input: UpdateInput) => servers.update(input, organizationId, em),
      updateBuildsConcurrency: (serverId: string, n: number) => servers.updateBuildsConcurrency(serverId, n, organizationId, em),
      remove: (serverId: string) => servers.remove(serverId, organizationId, em),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    /** The server records (server.* and the directory other plugins read); from the server plugin. */
    servers: ServerService;
    /** server.* for the current request's caller (request scope only). */
    callerServers: ReturnType<ReturnType<typeof callerServers>>;
  }
}
