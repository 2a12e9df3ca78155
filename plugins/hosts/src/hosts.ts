// The machines that run workloads, one connection each, through the host providers: this machine
// through `host.local`, a server through `host.ssh` with its record's details. Each engine is
// prepared on first use (a swarm manager — a server's advertising its own address — with the
// platform network, Berth's); see server-engine.ts for images copied to a server and the local
// socket that forwards programs run here to a server's engine.
import type Docker from 'dockerode';
import { badRequest, BerthError, notFound, optionalService, Organization, unavailable, type Cradle, type EntityManager, type HostConnection, type Logger } from '@berth/core';
import type { ContainerHosts, DirectoryServer, Host } from './container-hosts.ts';
import { DefaultSshKeys } from './default-key.ts';
import { engineCall } from './engine-errors.ts';
import { advertiseAddress, copyImage, EngineSocket, hasImage, prepareEngine } from './server-engine.ts';
import { localRouteAddress } from './route-address.ts';
import { ensureOrganizationNetwork, organizationNetworkName, organizationNetworks } from './organization-network.ts';
import { recordedPlatformNetwork, recordPlatformNetwork, refuseWhileAttached, type WorkloadExists } from './platform-network.ts';
import { ORGANIZATION_NODE_LABEL, SHARED_NODE_LABEL, organizationNodeLabel, ownLabels, relabelNode, sharedLabels, withoutOrganization } from './node-labels.ts';

const stopping = (where: string) => unavailable(`Berth is stopping: no new connection to ${where}`);

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
  /** The organizations whose label this machine's shared nodes are known to carry (ensurePlacement asks the engine once each). */
  readonly #placed = new Set<string>();
  #instanceOrganization?: string;
  /**
   * Set by close(): no connection is made afterwards. Work still running while Berth stops (a job
   * Agenda let go, a probe, an event's listener) would otherwise open an SSH connection nothing
   * closes, and its keepalive holds the process open for good.
   */
  #closed = false;

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

  async networkOf(organizationId: string): Promise<string> {
    // The first organization never changes once made: remembered.
    this.#instanceOrganization ??= (await this.#cradle().accounts.instanceOrganizationId()) ?? undefined;
    if (!organizationId || organizationId === this.#instanceOrganization) return this.platformNetwork;
    return organizationNetworkName(organizationId);
  }

  async ensureNetworkOf(docker: Docker, organizationId: string): Promise<string> {
    const name = await this.networkOf(organizationId);
    // The platform network is ensured when the engine is prepared.
    if (name !== this.platformNetwork) await ensureOrganizationNetwork(docker, (what, fn) => this.call(what, fn), name, organizationId);
    return name;
  }

  organizationNetworks(docker: Docker): Promise<string[]> {
    return organizationNetworks(
      docker,
      (what, fn) => this.call(what, fn),
      async ids => {
        const em = this.#cradle().orm.em.fork() as EntityManager;
        return new Set((await em.find(Organization, { id: { $in: ids } }, { fields: ['id'] })).map(o => o.id));
      },
    );
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
    this.#closed = true;
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
    if (this.#closed) return Promise.reject(stopping('this machine'));
    this.#machine ??= Promise.resolve().then(() => this.#cradle().providers.get('host', 'local').connect(null));
    return this.#machine;
  }

  /** A server's connection and its Host (the engine prepared on first use), made once until forgotten. */
  #server(serverId: string): Promise<ServerHost> {
    if (this.#closed) return Promise.reject(stopping(`server ${serverId}`));
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
          // Its own node is its organization's: labelled before any service there is made or updated.
          if (record.organizationId) await this.#labelOwnNode(docker, record.organizationId, `server ${serverId}`);
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
    await this.#labelSharedNodes(docker);
    return docker;
  }

  async ensurePlacement(serverId: string | null, organizationId: string): Promise<void> {
    const docker = await (await this.of(serverId)).engine(); // prepared: its own node labelled
    if (serverId !== null || this.#placed.has(organizationId)) return;
    await this.#eachNode(
      docker,
      'this machine',
      labels => labels[SHARED_NODE_LABEL] === 'true',
      labels => (labels[organizationNodeLabel(organizationId)] === 'true' ? null : { ...labels, [organizationNodeLabel(organizationId)]: 'true' }),
    );
    this.#placed.add(organizationId);
  }

  async organizationAdded(organizationId: string): Promise<void> {
    // Not reached yet: its preparation labels the shared nodes with every organization there is then.
    if (!this.#ready) return;
    await this.ensurePlacement(null, organizationId);
  }

  async organizationRemoved(organizationId: string): Promise<void> {
    this.#placed.delete(organizationId);
    if (!this.#ready) return;
    const docker = await this.local();
    await this.#eachNode(
      docker,
      'this machine',
      () => true,
      labels => withoutOrganization(labels, organizationId),
    );
  }

  /** Every organization there is (the kernel's table; none for the plugin used without a kernel). */
  async #organizations(): Promise<string[]> {
    const orm = optionalService(this.#cradle(), 'orm');
    if (!orm) return [];
    return (await orm.em.fork().find(Organization, {}, { fields: ['id'] })).map(o => o.id);
  }

  /**
   * This machine's shared nodes get every organization's label (an upgrade's first use labels
   * them so, before any service is updated): its own node, the nodes marked shared, and the
   * managers Berth has not given to one organization (before placement by ownership, only the
   * instance owner joined managers). A worker joined before then carries no organization's label
   * and gets no task until cluster.joinServer names its server again.
   */
  async #labelSharedNodes(docker: Docker): Promise<void> {
    const info = (await this.call('reach the Docker engine of this machine', () => docker.info())) as { Swarm?: { NodeID?: string } };
    const self = info.Swarm?.NodeID;
    const organizations = await this.#organizations();
    const unplaced: string[] = [];
    await this.#eachNode(
      docker,
      'this machine',
      (labels, node) => {
        const placed = Object.keys(labels).some(k => k.startsWith(ORGANIZATION_NODE_LABEL));
        if (node.ID === self || labels[SHARED_NODE_LABEL] === 'true' || (node.Spec.Role === 'manager' && !placed)) return true;
        if (!placed) unplaced.push(node.Description?.Hostname ?? node.ID);
        return false;
      },
      labels => sharedLabels(labels, organizations),
    );
    for (const id of organizations) this.#placed.add(id);
    if (unplaced.length) this.#log.warn({ nodes: unplaced }, "swarm workers of this machine carry no organization's label: no workload is placed on them until cluster.joinServer names their server");
  }

  /** An organization's server: its own node carries the organization's label. */
  async #labelOwnNode(docker: Docker, organizationId: string, where: string): Promise<void> {
    const info = (await this.call(`reach the Docker engine of ${where}`, () => docker.info())) as { Swarm?: { NodeID?: string } };
    const self = info.Swarm?.NodeID;
    if (!self) return;
    await relabelNode(
      docker,
      self,
      labels => ownLabels(labels, organizationId),
      (what, fn) => this.call(`${what} of ${where}`, fn),
    );
  }

  async #eachNode(
    docker: Docker,
    where: string,
    which: (labels: Record<string, string>, node: { ID: string; Spec: { Role?: string }; Description?: { Hostname?: string } }) => boolean,
    next: (labels: Record<string, string>) => Record<string, string> | null,
  ): Promise<void> {
    // cast: dockerode's node list, read for ids, roles and labels
    const nodes = (await this.call(`list the swarm nodes of ${where}`, () => docker.listNodes())) as {
      ID: string;
      Spec: { Role?: string; Labels?: Record<string, string> };
      Description?: { Hostname?: string };
    }[];
    for (const node of nodes) {
      if (!which(node.Spec.Labels ?? {}, node)) continue;
      if (
        await relabelNode(
          docker,
          node.ID,
          labels => next(labels),
          (what, fn) => this.call(`${what} of ${where}`, fn),
        )
      )
        this.#log.info({ nodeId: node.ID, where }, 'swarm node labels for placement updated');
    }
  }
}

/** A server as the plugin keeps it: the provider's connection and the Host handed out. */
interface ServerHost {
  connection: HostConnection;
  host: Host;
}
