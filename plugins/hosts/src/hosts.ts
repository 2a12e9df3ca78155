// The machines that run workloads, one connection each, through the host providers: this machine
// through `host.local` (on first use it makes sure the engine is a swarm manager and that the
// platform network exists and is Berth's), a server through `host.ssh` with its record's details.
import type Docker from 'dockerode';
import { BerthError, notFound, optionalService, type Cradle, type EntityManager, type HostConnection, type Logger } from '@berth/core';
import type { ContainerHosts, Host } from './container-hosts.ts';
import { engineCall } from './engine-errors.ts';
import { ensurePlatformNetwork, recordedPlatformNetwork, recordPlatformNetwork, refuseWhileAttached, type WorkloadExists } from './platform-network.ts';

export class Hosts implements ContainerHosts {
  readonly #cradle: () => Cradle;
  readonly #log: Logger;
  readonly #advertiseAddr: string;
  readonly #dataDir: string;
  readonly platformNetwork: string;
  #machine?: Promise<HostConnection>;
  #ready?: Promise<Docker>;
  readonly #afterReady: ((docker: Docker) => Promise<void>)[] = [];
  readonly #servers = new Map<string, Promise<HostConnection>>();

  constructor({ cradle, logger, config }: { cradle: () => Cradle; logger: Logger; config: { swarmAdvertiseAddr: string; platformNetwork: string; dataDir: string } }) {
    this.#cradle = cradle;
    this.#log = logger;
    this.#advertiseAddr = config.swarmAdvertiseAddr;
    this.#dataDir = config.dataDir;
    this.platformNetwork = config.platformNetwork;
  }

  async of(serverId: string | null): Promise<Host> {
    if (serverId === null) {
      const machine = await this.#thisMachine();
      return { engine: () => this.local(), run: (argv, options) => machine.run(argv, options) };
    }
    let connection = this.#servers.get(serverId);
    if (!connection) {
      connection = this.#connectServer(serverId);
      this.#servers.set(serverId, connection);
      connection.catch(() => this.#servers.delete(serverId));
    }
    return await connection;
  }

  /**
   * At boot: a platformNetwork other than the one this Berth last used is checked against the
   * engine now (refused while this instance's workloads are on the former network, or when the new
   * one is not Berth's). An unchanged key leaves the engine alone until first use.
   */
  async checkNetworkAtBoot(exists: WorkloadExists, em: EntityManager): Promise<void> {
    const former = recordedPlatformNetwork(this.#dataDir);
    if (former === this.platformNetwork) return;
    const docker = await (await this.#thisMachine()).engine();
    await refuseWhileAttached({ docker, call: (what, fn) => this.call(what, fn), former, configured: this.platformNetwork, exists, em });
    // The engine prepared now: swarm mode, the new network ensured (a foreign one refused) and recorded.
    await this.local();
    this.#log.info({ from: former, to: this.platformNetwork }, 'the platform network changed; no workload of this instance was on the former one');
  }

  local(): Promise<Docker> {
    // A failed preparation is retried on the next call rather than remembered.
    this.#ready ??= this.#prepare().then(docker => {
      for (const task of this.#afterReady.splice(0)) void task(docker).catch(e => this.#log.warn({ err: e }, 'a task after the engine was reached failed'));
      return docker;
    }, e => {
      this.#ready = undefined;
      throw e;
    });
    return this.#ready;
  }

  afterReady(task: (docker: Docker) => Promise<void>): void {
    this.#afterReady.push(task);
  }

  call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return engineCall(this.#log, what, fn);
  }

  async forget(serverId: string): Promise<void> {
    const connection = this.#servers.get(serverId);
    this.#servers.delete(serverId);
    await connection?.then(c => c.close(), () => undefined);
  }

  /** Closes every connection (at shutdown: an open SSH connection would keep the process alive). */
  async close(): Promise<void> {
    const servers = [...this.#servers.keys()];
    await Promise.all(servers.map(id => this.forget(id)));
    const machine = this.#machine;
    this.#machine = undefined;
    this.#ready = undefined;
    await machine?.then(c => c.close(), () => undefined);
  }

  /** This machine through host.local: the connection made once (an engine that does not answer fails engine(), not this). */
  #thisMachine(): Promise<HostConnection> {
    this.#machine ??= Promise.resolve().then(() => this.#cradle().providers.get('host', 'local').connect(null));
    return this.#machine;
  }

  async #connectServer(serverId: string): Promise<HostConnection> {
    const server = await optionalService(this.#cradle(), 'hostServers')?.server(serverId);
    if (!server) throw notFound(`Server ${serverId}`);
    return this.#cradle().providers.get('host', 'ssh').connect(server);
  }

  async #prepare(): Promise<Docker> {
    const docker = await (await this.#thisMachine()).engine(); // honours DOCKER_HOST, else /var/run/docker.sock
    const info = await this.call('reach the Docker engine', () => docker.info() as Promise<{ Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } }>);
    if (info.Swarm?.LocalNodeState !== 'active') {
      this.#log.info({ advertiseAddr: this.#advertiseAddr }, 'initialising swarm mode on the local engine');
      await this.call('initialise swarm mode', () => docker.swarmInit({ ListenAddr: '0.0.0.0:2377', AdvertiseAddr: this.#advertiseAddr }));
    } else if (info.Swarm.ControlAvailable === false) {
      throw new BerthError('INTERNAL_SERVER_ERROR', 'The local Docker engine is a swarm worker; Berth needs a manager');
    }
    await ensurePlatformNetwork(docker, (what, fn) => this.call(what, fn), this.platformNetwork, this.#log);
    await recordPlatformNetwork(this.#dataDir, this.platformNetwork);
    return docker;
  }
}
