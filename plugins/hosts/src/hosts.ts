// The machines that run workloads, one connection each, through the host providers: this machine
// through `host.local`, a server through `host.ssh` with its record's details. Each engine is
// prepared on first use (a swarm manager — a server's advertising its own address — with the
// platform network, Berth's); see server-engine.ts for images copied to a server and the local
// socket that forwards programs run here to a server's engine.
import type Docker from 'dockerode';
import { badRequest, BerthError, notFound, optionalService, type Cradle, type EntityManager, type HostConnection, type Logger } from '@berth/core';
import type { ContainerHosts, DirectoryServer, Host } from './container-hosts.ts';
import { DefaultSshKeys } from './default-key.ts';
import { engineCall } from './engine-errors.ts';
import { advertiseAddress, copyImage, EngineSocket, hasImage, prepareEngine } from './server-engine.ts';
import { localRouteAddress } from './route-address.ts';
import { recordedPlatformNetwork, recordPlatformNetwork, refuseWhileAttached, type WorkloadExists } from './platform-network.ts';

export class Hosts implements ContainerHosts {
  readonly #cradle: () => Cradle;
  readonly #log: Logger;
  readonly #advertiseAddr: string | undefined;
  readonly #dataDir: string;
  readonly platformNetwork: string;
  #machine?: Promise<HostConnection>;
  #ready?: Promise<Docker>;
  readonly #afterReady: ((docker: Docker) => Promise<void>)[] = [];
  readonly #servers = new Map<string, Promise<ServerHost>>();
  readonly #sockets = new Map<string, Promise<EngineSocket>>();
  /** Servers connected with their organization's default key, by serverId: the organization. */
  readonly #onDefaultKey = new Map<string, string>();
  readonly defaultKeys: DefaultSshKeys;

  constructor({ cradle, logger, config }: { cradle: () => Cradle; logger: Logger; config: { swarmAdvertiseAddr?: string; platformNetwork: string; dataDir: string } }) {
    this.#cradle = cradle;
    this.#log = logger;
    this.#advertiseAddr = config.swarmAdvertiseAddr;
    this.#dataDir = config.dataDir;
    this.platformNetwork = config.platformNetwork;
    // A saved or removed default key applies from the next connection: those made with the former one close.
    this.defaultKeys = new DefaultSshKeys(cradle, async organizationId => {
      const servers = [...this.#onDefaultKey].filter(([, org]) => org === organizationId).map(([serverId]) => serverId);
      await Promise.all(servers.map(serverId => this.forget(serverId)));
    });
  }

  async of(serverId: string | null): Promise<Host> {
    if (serverId === null) {
      const machine = await this.#thisMachine();
      return { engine: () => this.local(), run: (argv, options) => machine.run(argv, options) };
    }
    return (await this.#server(serverId)).host;
  }

  async asIs(serverId: string | null): Promise<Docker> {
    if (serverId === null) return (await this.#thisMachine()).engine();
    return (await this.#server(serverId)).connection.engine();
  }

  async dockerHost(serverId: string | null): Promise<string | undefined> {
    if (serverId === null) return undefined;
    let socket = this.#sockets.get(serverId);
    if (!socket) {
      socket = this.#server(serverId).then(async s => {
        if (!s.connection.dialEngine) throw new BerthError('INTERNAL_SERVER_ERROR', `The host provider of server ${serverId} offers no stream to its engine`);
        await s.host.engine(); // prepared (and reachable) before a program uses it
        return EngineSocket.open(() => s.connection.dialEngine!(), this.#log);
      });
      this.#sockets.set(serverId, socket);
      socket.catch(() => this.#sockets.delete(serverId));
    }
    return `unix://${(await socket).path}`;
  }

  async provideImage(serverId: string | null, image: string, signal?: AbortSignal): Promise<'present' | 'copied' | 'absent'> {
    const target = await (await this.of(serverId)).engine();
    if (await this.call(`inspect image ${image}`, () => hasImage(target, image))) return 'present';
    if (serverId === null) return 'absent';
    const copied = await this.call(`copy image ${image} to server ${serverId}`, () => this.local().then(local => copyImage(local, target, image, signal)));
    if (copied) this.#log.info({ image, serverId }, 'image copied from the local engine to the server');
    return copied ? 'copied' : 'absent';
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
    this.#ready ??= this.#prepare().then(
      docker => {
        for (const task of this.#afterReady.splice(0)) void task(docker).catch(e => this.#log.warn({ err: e }, 'a task after the engine was reached failed'));
        return docker;
      },
      e => {
        this.#ready = undefined;
        throw e;
      },
    );
    return this.#ready;
  }

  afterReady(task: (docker: Docker) => Promise<void>): void {
    this.#afterReady.push(task);
  }

  call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return engineCall(this.#log, what, fn);
  }

  async forget(serverId: string): Promise<void> {
    const server = this.#servers.get(serverId);
    const socket = this.#sockets.get(serverId);
    this.#servers.delete(serverId);
    this.#sockets.delete(serverId);
    this.#onDefaultKey.delete(serverId);
    await socket?.then(
      s => s.close(),
      () => undefined,
    );
    await server?.then(
      s => s.connection.close(),
      () => undefined,
    );
  }

  /** Closes every connection (at shutdown: an open SSH connection would keep the process alive). */
  async close(): Promise<void> {
    const servers = [...new Set([...this.#servers.keys(), ...this.#sockets.keys()])];
    await Promise.all(servers.map(id => this.forget(id)));
    const machine = this.#machine;
    this.#machine = undefined;
    this.#ready = undefined;
    await machine?.then(
      c => c.close(),
      () => undefined,
    );
  }

  /** This machine through host.local: the connection made once (an engine that does not answer fails engine(), not this). */
  #thisMachine(): Promise<HostConnection> {
    this.#machine ??= Promise.resolve().then(() => this.#cradle().providers.get('host', 'local').connect(null));
    return this.#machine;
  }

  /** A server's connection and its Host (the engine prepared on first use), made once until forgotten. */
  #server(serverId: string): Promise<ServerHost> {
    let server = this.#servers.get(serverId);
    if (!server) {
      server = this.#connectServer(serverId);
      this.#servers.set(serverId, server);
      server.catch(() => this.#servers.delete(serverId));
    }
    return server;
  }

  async #connectServer(serverId: string): Promise<ServerHost> {
    const record = await optionalService(this.#cradle(), 'hostServers')?.server(serverId);
    if (!record) throw notFound(`Server ${serverId}`);
    const connection = await this.#cradle()
      .providers.get('host', 'ssh')
      .connect(await this.#withKey(record));
    let ready: Promise<Docker> | undefined;
    const engine = (): Promise<Docker> => {
      // As for the local engine: a failed preparation is retried on the next call.
      ready ??= connection
        .engine()
        .then(async docker => {
          await prepareEngine(docker, {
            call: (what, fn) => this.call(what, fn),
            log: this.#log,
            advertiseAddr: await advertiseAddress(record.ipAddress),
            network: this.platformNetwork,
            where: `server ${serverId}`,
          });
          return docker;
        })
        .catch(e => {
          ready = undefined;
          throw e;
        });
      return ready;
    };
    return { connection, host: { engine, run: (argv, options) => connection.run(argv, options) } };
  }

  /** A record that names no key (sshKeyId null) takes its organization's default key, or is refused saying how to give it one. */
  async #withKey(record: DirectoryServer): Promise<DirectoryServer> {
    if (record.sshKeyId !== null || !record.organizationId) return record;
    const privateKey = await this.defaultKeys.privateKey(record.organizationId);
    if (!privateKey) {
      throw badRequest(
        `Server ${record.serverId} has no SSH key: attach one (server.update with sshKeyId), or save the organization's default key (settings.saveSSHPrivateKey), which servers without a key use`,
      );
    }
    this.#onDefaultKey.set(record.serverId, record.organizationId);
    return { ...record, privateKey };
  }

  async #prepare(): Promise<Docker> {
    const docker = await (await this.#thisMachine()).engine(); // honours DOCKER_HOST, else /var/run/docker.sock
    await prepareEngine(docker, {
      call: (what, fn) => this.call(what, fn),
      log: this.#log,
      advertiseAddr: this.#advertiseAddr ?? ((await localRouteAddress()) || '127.0.0.1'),
      network: this.platformNetwork,
      where: 'this machine',
    });
    await recordPlatformNetwork(this.#dataDir, this.platformNetwork);
    return docker;
  }
}

/** A server as the plugin keeps it: the provider's connection and the Host handed out. */
interface ServerHost {
  connection: HostConnection;
  host: Host;
}
