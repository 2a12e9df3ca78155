// The server-setup operations of the caller's organization's servers: setup (a deployment of the
// server), validate, security, publicIp, getServerTime, getDefaultCommand (setupMonitoring and
// getServerMetrics are the monitoring plugin's). Request-scoped: the caller's organization and the
// request's transaction come from the container. Another organization's server is NOT_FOUND.
import { userInfo } from 'node:os';
import { RequestScope } from '@berth/core';
import { localRouteAddress } from '@berth/plugin-hosts';
import { auditServer, connectionCheck, privilege, serverRouteAddress, validateServer } from './doctor.ts';
import { Server, type ServerRow } from './entities.ts';
import { defaultCommand, runSetup, ServerSetup } from './setup.ts';

/** Registered asClass(...).scoped() as `serverOperationRequests`; the setup deployer itself is the singleton `serverSetup`. */
export class ServerOperationRequests extends RequestScope {
  async setup(serverId: string) {
    return runSetup(this.cradle, this.cradle.serverSetup, await this.#find(serverId), this.em);
  }

  /** A server's doctor, or without serverId the machine Berth runs on's. */
  validate(serverId?: string) {
    return serverId ? this.#validate(serverId) : this.#validateLocal();
  }

  /** validate of the machine Berth runs on (no serverId): the same doctor, for its operators (the transport checks the caller). */
  async #validateLocal() {
    const { hosts, clock } = this.cradle;
    return validateServer(await hosts.of(null), { username: userInfo().username, network: hosts.platformNetwork, serverType: 'deploy', now: () => clock.now() });
  }

  async #validate(serverId: string) {
    const row = await this.#find(serverId);
    await ServerSetup.requireKey(this.cradle, row, 'validating it');
    const { hosts } = this.cradle;
    try {
      const host = await hosts.of(row.serverId);
      return await validateServer(host, { username: row.username, network: hosts.platformNetwork, serverType: row.serverType, now: () => this.cradle.clock.now() });
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

  async security(serverId: string) {
    const row = await this.#find(serverId);
    await ServerSetup.requireKey(this.cradle, row, 'auditing it');
    const host = await this.cradle.hosts.of(row.serverId);
    return auditServer(host, (await privilege(host)) ?? []);
  }

  /** This machine's address (serverIp when set, else the default route's interface), or a server's read over SSH. */
  async publicIp(serverId?: string): Promise<string> {
    if (!serverId) return (this.cradle.config as { serverIp?: string }).serverIp || (await localRouteAddress());
    const row = await this.#find(serverId);
    await ServerSetup.requireKey(this.cradle, row, 'reading its address');
    return serverRouteAddress(await this.cradle.hosts.of(row.serverId));
  }

  serverTime() {
    return { time: new Date(this.cradle.clock.now()).toISOString(), timezone: Intl.DateTimeFormat().resolvedOptions().timeZone };
  }

  async defaultCommand(serverId: string): Promise<string> {
    const row = await this.#find(serverId);
    return defaultCommand(row.serverType, this.cradle.hosts.platformNetwork);
  }

  #find(serverId: string): Promise<ServerRow> {
    return this.owned(Server, { serverId }, 'Server');
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The deployer of the servers' setup runs (deployments of target type `server`); from the server plugin. */
    serverSetup: ServerSetup;
    /** server.setup, validate, security...: the server-setup operations for the current request's caller (request scope only). */
    serverOperationRequests: ServerOperationRequests;
  }
}
