// server.*: the servers of the caller's organization — added (past the checks other plugins add:
// billing's quota), one with its deployments and key, listed, changed, removed. Request-scoped: the
// caller's organization and the request's transaction come from the container. A record of another
// organization is NOT_FOUND, never FORBIDDEN; no answer carries a private key.
import { randomBytes } from 'node:crypto';
import { BerthError, conflict, newId, optionalService, RequestScope, type EntityManager, type SshKeySummary } from '@berth/core';
import { Server, type ServerRow } from './entities.ts';
import { DEFAULT_METRICS_CONFIG, type CreateInput, type ServerView, type UpdateInput } from './schemas.ts';
import { heldBy, newestFirst, toView } from './service.ts';

/** What changes how Berth reaches the server: a change closes its pooled connection. */
const CONNECTION_FIELDS = ['ipAddress', 'port', 'username', 'sshKeyId', 'hostKeyFingerprint'] as const;

/** Registered asClass(...).scoped() as `serverRequests`; other plugins use the singleton `servers`. */
export class ServerRequests extends RequestScope {
  async create(input: CreateInput): Promise<ServerView> {
    const sshKeyId = input.sshKeyId || null;
    if (sshKeyId) await this.#key(sshKeyId);
    const row = await this.cradle.servers.createChecked(this.organizationId, this.em, em => this.#insert(input, sshKeyId, em));
    return toView(row);
  }

  /** Stores the new server in `em` (the request's transaction, or the one that holds the create checks' lock). */
  async #insert(input: CreateInput, sshKeyId: string | null, em: EntityManager): Promise<ServerRow> {
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
      organizationId: this.organizationId,
      failedProbes: 0,
      unreachableSince: null,
      createdAt: new Date(),
    });
    await em.flush();
    return row;
  }

  /** The record with its own deployments (setup runs) and its key (never the private half). */
  async one(serverId: string) {
    return this.#detail(await this.#find(serverId));
  }

  /** Newest first, each with the number of workloads on it; a member given servers one by one sees those (the peer's accessedServers). */
  async all() {
    return (await this.cradle.servers.all(this.organizationId, this.em)).filter(s => this.#given(s.serverId));
  }

  /** Whether the caller was given the server: owners, admins and members given every record are. */
  #given(serverId: string): boolean {
    const servers = this.principal.grants.records?.servers;
    return !servers || servers.includes(serverId);
  }

  count(): Promise<number> {
    return this.cradle.servers.count(this.organizationId, this.em);
  }

  /** Servers of a type that have a key (withSSHKey: deploy servers; buildServers: build servers), newest first. */
  async ofType(serverType: 'deploy' | 'build'): Promise<ServerView[]> {
    const rows = await this.em.find(Server, { organizationId: this.organizationId, serverType, sshKeyId: { $ne: null } }, { orderBy: newestFirst });
    return rows.filter(r => this.#given(r.serverId)).map(toView);
  }

  forPermissions() {
    return this.cradle.servers.forPermissions(this.organizationId, this.em);
  }

  async update(input: UpdateInput): Promise<ServerView> {
    const row = await this.#find(input.serverId);
    const before = CONNECTION_FIELDS.map(f => row[f] ?? null);
    if (input.sshKeyId) await this.#key(input.sshKeyId);
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
    await this.em.flush();
    // The pooled connection holds the former address, login, key or pinned host key: the next use connects anew.
    if (CONNECTION_FIELDS.some((f, i) => (row[f] ?? null) !== before[i])) await this.#forget(row.serverId);
    if (held) {
      const message = `Server ${row.name} was set inactive by ${held} and stays so until ${held} sets it active again: ${heldBy(held)}`;
      throw new BerthError('CONFLICT', message, [{ path: ['serverStatus'], message: `serverStatus: ${message}` }]);
    }
    return toView(row);
  }

  async updateBuildsConcurrency(serverId: string, buildsConcurrency: number): Promise<ServerView> {
    const row = await this.#find(serverId);
    row.buildsConcurrency = buildsConcurrency;
    await this.em.flush();
    return toView(row);
  }

  /** Deletes the server, refused (CONFLICT, listing them) while workloads live there; answers it as it was. */
  async remove(serverId: string) {
    const row = await this.#find(serverId);
    const workloads = await this.cradle.servers.workloadsOn(serverId, this.em);
    if (workloads.length) {
      throw conflict(`Server ${row.name} still runs ${workloads.length} workload(s): ${workloads.map(w => `${w.kind} ${w.name} (${w.id})`).join(', ')}. Remove them (or move them) first`);
    }
    const detail = await this.#detail(row);
    await optionalService(this.cradle, 'deployments')?.removeFor('server', serverId, this.em, { includeActive: true });
    await optionalService(this.cradle, 'scheduleDirectory')?.removeForServer(serverId, this.em);
    await this.em.nativeDelete(Server, { serverId, organizationId: this.organizationId });
    await this.#forget(serverId);
    return detail;
  }

  async #detail(row: ServerRow) {
    const deployments = optionalService(this.cradle, 'deployments');
    const records = (await deployments?.listFor('server', [row.serverId], this.em))?.get(row.serverId) ?? [];
    let sshKey: SshKeySummary | null = null;
    if (row.sshKeyId)
      sshKey = await this.cradle.sshKeys.one(row.sshKeyId, row.organizationId, this.em).catch(e => {
        if (e instanceof BerthError && e.code === 'NOT_FOUND') return null;
        throw e;
      });
    return { ...toView(row), deployments: deployments?.views(records) ?? [], sshKey };
  }

  /** A key of the organization, else NOT_FOUND naming it. */
  async #key(sshKeyId: string): Promise<void> {
    await this.cradle.sshKeys.one(sshKeyId, this.organizationId, this.em);
  }

  async #forget(serverId: string): Promise<void> {
    await this.cradle.hosts.forget(serverId);
  }

  /** One of the organization's servers (NOT_FOUND otherwise: another organization's is never FORBIDDEN). */
  #find(serverId: string): Promise<ServerRow> {
    return this.owned(Server, { serverId }, 'Server');
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** server.* for the current request's caller (request scope only). */
    serverRequests: ServerRequests;
  }
}
