// The server-setup operations of one organization's servers: setup (a deployment of the server),
// validate, security, publicIp, getServerTime, getDefaultCommand, setupMonitoring and
// getServerMetrics. Another organization's server is NOT_FOUND.
import { userInfo } from 'node:os';
import { notFound, type Cradle, type EntityManager } from '@berth/core';
import { localRouteAddress } from '@berth/plugin-hosts';
import { auditServer, connectionCheck, privilege, serverRouteAddress, validateServer } from './doctor.ts';
import { Server, type ServerRow } from './entities.ts';
import { defaultCommand, runSetup, ServerSetup } from './setup.ts';

export class ServerOperations {
  readonly #cradle: () => Cradle;
  readonly setup: ServerSetup;

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
    this.setup = new ServerSetup(cradle);
  }

  async runSetup(serverId: string, organizationId: string, em: EntityManager) {
    return runSetup(this.#cradle(), this.setup, await this.#find(serverId, organizationId, em), em);
  }

  /** validate of the machine Berth runs on (no serverId): the same doctor, for its operators (the transport checks the caller). */
  async validateLocal() {
    const { hosts, clock } = this.#cradle();
    return validateServer(await hosts.of(null), { username: userInfo().username, network: hosts.platformNetwork, serverType: 'deploy', now: () => clock.now() });
  }

  async validate(serverId: string, organizationId: string, em: EntityManager) {
    const row = await this.#find(serverId, organizationId, em);
    await ServerSetup.requireKey(this.#cradle(), row, 'validating it');
    const { hosts } = this.#cradle();
    try {
      const host = await hosts.of(row.serverId);
      return await validateServer(host, { username: row.username, network: hosts.platformNetwork, serverType: row.serverType, now: () => this.#cradle().clock.now() });
    } catch (e) {
      const failed = connectionCheck(e as Error, row);
      const absent = { enabled: false, version: null };
      return {
        docker: absent,
        rclone: absent,
        nixpacks: absent,
        buildpacks: absent,
        railpack: absent,
        isDokployNetworkInstalled: false,
        isSwarmInstalled: false,
        isMainDirectoryInstalled: false,
        privilegeMode: 'none',
        dockerGroupMember: false,
        checks: [failed],
      };
    }
  }

  async security(serverId: string, organizationId: string, em: EntityManager) {
    const row = await this.#find(serverId, organizationId, em);
    await ServerSetup.requireKey(this.#cradle(), row, 'auditing it');
    const host = await this.#cradle().hosts.of(row.serverId);
    return auditServer(host, (await privilege(host)) ?? []);
  }

  /** This machine's address (serverIp when set, else the default route's interface), or a server's read over SSH. */
  async publicIp(serverId: string | undefined, organizationId: string, em: EntityManager): Promise<string> {
    if (!serverId) return (this.#cradle().config as { serverIp?: string }).serverIp || (await localRouteAddress());
    const row = await this.#find(serverId, organizationId, em);
    await ServerSetup.requireKey(this.#cradle(), row, 'reading its address');
    return serverRouteAddress(await this.#cradle().hosts.of(row.serverId));
  }

  serverTime() {
    return { time: new Date(this.#cradle().clock.now()).toISOString(), timezone: Intl.DateTimeFormat().resolvedOptions().timeZone };
  }

  async defaultCommand(serverId: string, organizationId: string, em: EntityManager): Promise<string> {
    const row = await this.#find(serverId, organizationId, em);
    return defaultCommand(row.serverType, this.#cradle().hosts.platformNetwork);
  }

  async #find(serverId: string, organizationId: string, em: EntityManager): Promise<ServerRow> {
    const row = await em.findOne(Server, { serverId, organizationId });
    if (!row) throw notFound('Server');
    return row;
  }
}

/** The operations for one request: confined to the caller's organization and the request's unit of work. */
export const callerServerOperations =
  (ops: ServerOperations) =>
  ({ principal, em }: Cradle) => {
    const organizationId = principal!.organizationId;
    return {
      setup: (serverId: string) => ops.runSetup(serverId, organizationId, em),
      validate: (serverId?: string) => (serverId ? ops.validate(serverId, organizationId, em) : ops.validateLocal()),
      security: (serverId: string) => ops.security(serverId, organizationId, em),
      publicIp: (serverId?: string) => ops.publicIp(serverId, organizationId, em),
      serverTime: () => ops.serverTime(),
      defaultCommand: (serverId: string) => ops.defaultCommand(serverId, organizationId, em),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    /** server.setup, validate, security...: the server-setup operations; from the server plugin. */
    serverOperations: ServerOperations;
    /** The same for the current request's caller (request scope only). */
    callerServerOperations: ReturnType<ReturnType<typeof callerServerOperations>>;
  }
}
