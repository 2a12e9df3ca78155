// The swarm behind swarm.* and cluster.*: the nodes of this machine's swarm or a server's, a server
// joined to a swarm over its own connection, a worker drained and removed. A server of another
// organization is NOT_FOUND. Engines are taken as they are (hosts.asIs): listing the nodes of a
// server must not make it a swarm manager, and a server about to join must not become the manager
// of its own swarm first. Join tokens are read from the manager, handed to the joining engine in
// the body of its API call and rotated after the join; they are never answered, logged or put on a
// command line, and a failed join's message is scrubbed of them.
// Request-scoped: the caller, their organization and the request's transaction come from the
// container.
import type Docker from 'dockerode';
import { BerthError, Organization, RequestScope, conflict, invalidField, notFound, type BerthEvents, type Static } from '@berth/core';
import { ORGANIZATION_LABEL, onlyOrganizationLabels, ownedNode, relabelNode, sharedLabels, updateNode } from '@berth/plugin-hosts';
import type {} from '@berth/plugin-server'; // the `servers` of the container
import type { EngineNode as EngineNodeView, JoinInput, Joined, NodeApp, NodeLine, Removed } from './schemas.ts';
import { SWARM_PORT, TOKEN_PLACEHOLDER, capital, loopback, ownersAlone, scrubbed, sleep, type EngineNode, type EngineTask, type ListedNode, type Service, type SwarmInfo } from './swarm.ts';

/** Registered asClass(...).scoped() as `clusterRequests`. */
export class ClusterRequests extends RequestScope {
  /** How long removeWorker waits for the drained node's tasks to run elsewhere. */
  get #drainTimeoutMs(): number {
    return this.cradle.config.drainTimeoutSeconds * 1000;
  }

  get #hosts() {
    return this.cradle.hosts;
  }

  /** Whether the caller is the instance owner (the first admin): this machine's swarm is every organization's. */
  #isOwner(): Promise<boolean> {
    return this.cradle.accounts.isInstanceOperator(this.principal);
  }

  #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return this.#hosts.call(what, fn);
  }

  /**
   * The organization's server whose engine is the swarm node (its Swarm.NodeID, asked of every
   * server but the manager at once, 5 s each at most); null when no server of the organization is
   * that node (one joined by hand, or another organization's).
   */
  async #serverOfNode(nodeId: string, managerId: string | null): Promise<{ serverId: string; docker: Docker } | null> {
    const candidates = (await this.cradle.servers.all(this.organizationId, this.em)).map(s => s.serverId).filter(serverId => serverId !== managerId);
    const nodeOf = async (serverId: string): Promise<Docker | null> => {
      const docker = await this.#hosts.asIs(serverId);
      const info = await Promise.race([docker.info() as Promise<SwarmInfo>, sleep(5000).then(() => null)]);
      return info?.Swarm?.NodeID === nodeId ? docker : null;
    };
    const engines = await Promise.all(candidates.map(serverId => nodeOf(serverId).catch(() => null)));
    const at = engines.findIndex(Boolean);
    return at < 0 ? null : { serverId: candidates[at]!, docker: engines[at]! };
  }

  /** The server leaves its swarm and its pooled connection is dropped, so its next use sees it outside any swarm. */
  async #leaveSwarm({ serverId, docker }: { serverId: string; docker: Docker }): Promise<string> {
    // An engine busy stopping containers may answer the leave with an error while it goes on leaving:
    // what counts is its state after, and a second ask when it is still in the swarm.
    // cast: the engine's info, read for its swarm state
    const left = () =>
      docker.info().then(
        i => (i as SwarmInfo).Swarm?.LocalNodeState === 'inactive',
        () => false,
      );
    const leave = async () => {
      try {
        await docker.swarmLeave({ force: true });
      } catch (e) {
        if (await left()) return;
        await new Promise(r => setTimeout(r, 2000));
        if (await left()) return;
        await docker.swarmLeave({ force: true }).catch(async () => {
          if (!(await left())) throw e;
        });
      }
    };
    await this.#call(`make server ${serverId} leave its swarm`, leave);
    await this.#hosts.forget(serverId);
    return serverId;
  }

  /** The serverId the caller named (NOT_FOUND for another organization's), null for this machine. */
  async #server(serverId: string | null | undefined): Promise<string | null> {
    if (!serverId) return null;
    await this.cradle.servers.owned(serverId, this.organizationId, this.em);
    return serverId;
  }

  /** The engine of the named machine as it is (no swarm initialised for a listing). */
  async #engine(serverId: string | null | undefined): Promise<{ docker: Docker; where: string }> {
    const id = await this.#server(serverId);
    return { docker: await this.#hosts.asIs(id), where: id ? `server ${id}` : 'this machine' };
  }

  // ------------------------------------------------------------ swarm.*
  /**
   * The nodes a listing shows: every node of this machine's swarm (its listings are the instance
   * operators'), and of a server's swarm the organization's own — the server's node and the nodes
   * labelled as the organization's (joined for it) — never another organization's nor a shared one.
   */
  async #visible(docker: Docker, serverId: string | undefined, where: string): Promise<{ info: SwarmInfo; mine: (n: ListedNode) => boolean }> {
    const info = (await this.#call(`reach the Docker engine of ${where}`, () => docker.info())) as SwarmInfo;
    if (!serverId) return { info, mine: () => true };
    return { info, mine: n => n.ID === info.Swarm?.NodeID || ownedNode((n.Spec as EngineNode['Spec']).Labels, this.organizationId) };
  }

  /** `docker node ls` of the machine's swarm, as the CLI's JSON lines. */
  async nodeLines(serverId: string | undefined): Promise<NodeLine[]> {
    const { docker, where } = await this.#engine(serverId);
    const { info, mine } = await this.#visible(docker, serverId, where);
    const nodes = ((await this.#call(`list the swarm nodes of ${where}`, () => docker.listNodes())) as EngineNode[]).filter(mine);
    const root = info.Swarm?.Cluster?.TLSInfo?.TrustRoot;
    return nodes.map(n => ({
      Availability: capital(n.Spec.Availability),
      EngineVersion: n.Description?.Engine?.EngineVersion ?? '',
      Hostname: n.Description?.Hostname ?? '',
      ID: n.ID,
      ManagerStatus: n.ManagerStatus ? (n.ManagerStatus.Leader ? 'Leader' : capital(n.ManagerStatus.Reachability)) : '',
      Self: n.ID === info.Swarm?.NodeID,
      Status: capital(n.Status?.State),
      TLSStatus: !root || n.Description?.TLSInfo?.TrustRoot === root ? 'Ready' : 'Needs Rotation',
    }));
  }

  /** The engine's node objects (cluster.getNodes) */
  async nodes(serverId: string | undefined): Promise<Static<typeof EngineNodeView>[]> {
    const { docker, where } = await this.#engine(serverId);
    const { mine } = await this.#visible(docker, serverId, where);
    const nodes = (await this.#call(`list the swarm nodes of ${where}`, () => docker.listNodes())) as Static<typeof EngineNodeView>[];
    return nodes.filter(mine);
  }

  /** `docker node inspect` of one node. */
  async node(nodeId: string, serverId: string | undefined): Promise<Static<typeof EngineNodeView>> {
    const { docker, where } = await this.#engine(serverId);
    const { mine } = await this.#visible(docker, serverId, where);
    const node = (await this.#call(`inspect node ${nodeId} of the swarm of ${where}`, () => docker.getNode(nodeId).inspect())) as Static<typeof EngineNodeView>;
    if (!mine(node)) throw notFound(`Node ${nodeId}`);
    return node;
  }

  /** `docker service ls` of the organization's services on the swarm, each with the nodes its running tasks are on. */
  async apps(serverId: string | undefined): Promise<NodeApp[]> {
    const { docker, where } = await this.#engine(serverId);
    // cast: dockerode's Service type lacks the ServiceStatus the engine answers with status: true.
    const services = (await this.#call(`list the services of ${where}`, () =>
      docker.listServices({ status: true, filters: { label: [`${ORGANIZATION_LABEL}=${this.organizationId}`] } } as {}),
    )) as unknown as Service[];
    if (!services.length) return [];
    const [tasks, hostnames] = await Promise.all([this.#tasks(docker, where, { 'desired-state': ['running'] }), this.#hostnames(docker, where, await this.#visible(docker, serverId, where))]);
    return services
      .map(s => ({
        ID: s.ID,
        Image: (s.Spec.TaskTemplate?.ContainerSpec?.Image ?? '').replace(/@sha256:[a-f0-9]+$/, ''),
        Mode: s.Spec.Mode?.Global ? 'global' : 'replicated',
        Name: s.Spec.Name,
        Ports: (s.Endpoint?.Ports ?? [])
          .filter(p => p.PublishMode !== 'host')
          .map(p => `*:${p.PublishedPort}->${p.TargetPort}/${p.Protocol}`)
          .join(', '),
        Replicas: s.Spec.Mode?.Global
          ? `${s.ServiceStatus?.RunningTasks ?? 0}/${s.ServiceStatus?.DesiredTasks ?? 0}`
          : `${s.ServiceStatus?.RunningTasks ?? 0}/${s.Spec.Mode?.Replicated?.Replicas ?? s.ServiceStatus?.DesiredTasks ?? 0}`,
        nodes: tasks.filter(t => t.ServiceID === s.ID && t.NodeID).map(t => ({ nodeId: t.NodeID!, hostname: hostnames.get(t.NodeID!) ?? '', state: t.Status?.State ?? '' })),
      }))
      .sort((a, b) => a.Name.localeCompare(b.Name));
  }

  async #tasks(docker: Docker, where: string, filters: Record<string, string[]>): Promise<EngineTask[]> {
    return (await this.#call(`list the tasks of ${where}`, () => docker.listTasks({ filters }))) as EngineTask[];
  }

  /** Node id → hostname; with `visible`, only the nodes the caller's listing shows (a task elsewhere keeps its node id alone). */
  async #hostnames(docker: Docker, where: string, visible?: { mine: (n: ListedNode) => boolean }): Promise<Map<string, string>> {
    const nodes = (await this.#call(`list the swarm nodes of ${where}`, () => docker.listNodes())) as EngineNode[];
    return new Map(nodes.filter(n => !visible || visible.mine(n)).map(n => [n.ID, n.Description?.Hostname ?? '']));
  }

  /**
   * Placement by ownership, at join (and when a member is named again, which is how its sharing
   * changes): a server joined to this machine's swarm for the instance operators' organization is
   * shared (every organization's label) unless the join says `shared: false`; one joined for
   * another organization, or to a server's swarm, is that organization's alone. The manager's
   * engine labels the node before the join answers.
   */
  async #labelJoined(manager: Docker, managerWhere: string, nodeId: string, managerServerId: string | null, wanted: boolean | undefined): Promise<void> {
    const shared = !managerServerId && wanted !== false && this.organizationId === (await this.cradle.accounts.instanceOrganizationId());
    const organizations = shared ? (await this.em.find(Organization, {}, { fields: ['id'] })).map(o => o.id) : [];
    await relabelNode(
      manager,
      nodeId,
      labels => (shared ? sharedLabels(labels, organizations) : onlyOrganizationLabels(labels, this.organizationId)),
      (what, fn) => this.#call(`${what} of the swarm of ${managerWhere}`, fn),
    );
  }

  // ------------------------------------------------------------ cluster.*
  /** The peer's addWorker/addManager: the join command, its token replaced by the placeholder. */
  async joinCommand(serverId: string | undefined): Promise<{ command: string; version: string }> {
    const id = await this.#server(serverId);
    const where = id ? `server ${id}` : 'this machine';
    const docker = await (await this.#hosts.of(id)).engine(); // a manager: the command names its address
    const info = (await this.#call(`reach the Docker engine of ${where}`, () => docker.info())) as SwarmInfo;
    const version = (await this.#call(`read the engine version of ${where}`, () => docker.version())) as { Version: string };
    const addr = info.Swarm?.NodeAddr || (id ? (await this.cradle.servers.owned(id, this.organizationId, this.em)).ipAddress : '');
    return { command: `docker swarm join --token ${TOKEN_PLACEHOLDER} ${addr}:${SWARM_PORT}`, version: version.Version };
  }

  /** Joins a server to the swarm of another server or of this machine, over the joining server's connection; answers its node id. */
  async join(input: JoinInput): Promise<Joined> {
    const organizationId = this.organizationId;
    const serverId = (await this.#server(input.serverId))!;
    const managerServerId = await this.#server(input.managerServerId);
    // A manager of this machine's swarm commands every organization's services there.
    if (!managerServerId && input.role === 'manager' && !(await this.#isOwner())) throw ownersAlone('role', "a manager of this machine's swarm controls every organization's services");
    if (managerServerId && input.shared === true) throw invalidField('shared', "a server's swarm is its organization's own: only a node of this machine's swarm is shared");
    if (managerServerId === serverId) throw invalidField('managerServerId', 'a server cannot join its own swarm');
    const managerWhere = managerServerId ? `server ${managerServerId}` : 'this machine';
    const where = `server ${serverId}`;

    const manager = await (await this.#hosts.of(managerServerId)).engine(); // prepared: a swarm manager
    const managerInfo = (await this.#call(`reach the Docker engine of ${managerWhere}`, () => manager.info())) as SwarmInfo;
    const managerAddr = managerInfo.Swarm?.NodeAddr ?? '';
    if (!managerAddr || loopback(managerAddr)) {
      throw conflict(
        `The swarm of ${managerWhere} advertises ${managerAddr || 'no address'}, which no other server can reach: ` +
          (managerServerId
            ? 'that server must advertise a routable address'
            : 'its swarm must advertise an address the servers reach (the swarmAdvertiseAddr key, BERTH_SWARM_ADVERTISE_ADDR, applies when Berth initialises swarm mode)') +
          `; ${where} was not joined`,
      );
    }
    const managerNodes = (await this.#call(`list the swarm nodes of ${managerWhere}`, () => manager.listNodes())) as EngineNode[];

    const joining = await this.#hosts.asIs(serverId);
    const info = (await this.#call(`reach the Docker engine of ${where}`, () => joining.info())) as SwarmInfo;
    const current = info.Swarm?.NodeID;
    if (info.Swarm?.LocalNodeState === 'active' && current) {
      const member = managerNodes.find(n => n.ID === current);
      if (member) {
        if ((member.Spec.Role ?? 'worker') !== input.role) throw conflict(`${where} is already a ${member.Spec.Role} of the swarm of ${managerWhere} (node ${current})`);
        await this.#labelJoined(manager, managerWhere, current, managerServerId, input.shared);
        // Announced again: what the swarm's nodes are given (a registry's CA) reaches one joined by hand too.
        await this.#announce('serverJoinedSwarm', { organizationId, serverId, managerServerId, nodeId: current, role: input.role, at: new Date().toISOString() });
        return { nodeId: current, serverId, managerServerId, role: input.role, advertiseAddr: member.Status?.Addr ?? '' };
      }
      // A swarm of its own: left only when it is that server alone and Berth runs nothing there.
      const workloads = await this.cradle.servers.workloadsOn(serverId, this.em);
      if (workloads.length) throw conflict(`${where} runs ${workloads.length} workload(s) (${workloads.map(w => w.name).join(', ')}) in a swarm of its own; remove them before it joins another swarm`);
      if (info.Swarm.ControlAvailable === false || (info.Swarm.Nodes ?? 1) > 1)
        throw conflict(`${where} is a member of another swarm (${info.Swarm.Nodes ?? '?'} nodes); it leaves that swarm before it joins this one`);
      await this.#call(`leave the swarm of its own on ${where}`, () => joining.swarmLeave({ force: true }));
    }

    const advertiseAddr = await this.#routeSource(serverId, managerAddr);
    const listen = await this.#call(`read the join tokens of ${managerWhere}`, () => manager.swarmInspect());
    const tokens = [listen.JoinTokens.Worker, listen.JoinTokens.Manager] as string[];
    const token = input.role === 'manager' ? listen.JoinTokens.Manager : listen.JoinTokens.Worker;
    try {
      await this.#call(`join ${where} to the swarm of ${managerWhere} as a ${input.role}`, () =>
        joining.swarmJoin({ ListenAddr: `0.0.0.0:${SWARM_PORT}`, AdvertiseAddr: advertiseAddr, RemoteAddrs: [`${managerAddr}:${SWARM_PORT}`], JoinToken: token }).catch((e: unknown) => {
          throw scrubbed(e, tokens);
        }),
      );
    } finally {
      await this.#rotate(manager, managerWhere, input.role);
      // The server's engine changed role: the next use prepares it anew (a worker is refused there).
      await this.#hosts.forget(serverId);
    }
    const joined = (await this.#call(`reach the Docker engine of ${where}`, async () => (await this.#hosts.asIs(serverId)).info())) as SwarmInfo;
    const nodeId = joined.Swarm?.NodeID;
    if (!nodeId) throw new BerthError('INTERNAL_SERVER_ERROR', `${where} answered no swarm node id after joining`);
    await this.#labelJoined(manager, managerWhere, nodeId, managerServerId, input.shared);
    this.cradle.logger.info({ serverId, managerServerId, role: input.role, nodeId }, 'server joined the swarm');
    await this.#announce('serverJoinedSwarm', { organizationId, serverId, managerServerId, nodeId, role: input.role, at: new Date().toISOString() });
    return { nodeId, serverId, managerServerId, role: input.role, advertiseAddr };
  }

  /**
   * serverJoinedSwarm or serverLeftSwarm, awaited: the operation answers once its subscribers (the
   * registry plugin writing or removing its CA on the node) are done. A subscriber's failure is
   * logged, never the operation's: the membership has changed by now.
   */
  async #announce<E extends 'serverJoinedSwarm' | 'serverLeftSwarm'>(event: E, payload: BerthEvents[E]): Promise<void> {
    await this.cradle.events.emitDurable(event, payload, this.em).catch((err: unknown) => this.cradle.logger.warn({ err, serverId: payload.serverId }, `a subscriber of ${event} failed`));
  }

  /** The address of the server's own interface that routes to the manager (`ip route get`). */
  async #routeSource(serverId: string, managerAddr: string): Promise<string> {
    const host = await this.#hosts.of(serverId);
    const route = await host.run(['ip', '-o', 'route', 'get', managerAddr]);
    const src = /\bsrc\s+(\S+)/.exec(route.stdout)?.[1];
    if (route.code !== 0 || !src)
      throw conflict(`server ${serverId} has no route to the swarm manager at ${managerAddr}: ${(route.stderr || route.stdout).trim() || `ip route get exited ${route.code}`}`);
    return src;
  }

  /** A new join token of the role just used: the one read for the join is worthless from now on. */
  async #rotate(manager: Docker, where: string, role: 'worker' | 'manager'): Promise<void> {
    await this.#call(`rotate the ${role} join token of ${where}`, async () => {
      const swarm = await manager.swarmInspect();
      await manager.swarmUpdate({ _query: { version: swarm.Version.Index, rotateWorkerToken: role === 'worker', rotateManagerToken: role === 'manager' }, _body: swarm.Spec });
    });
  }

  /** Drains a worker, waits until its tasks run elsewhere, removes it from the swarm; answers where each task went. */
  async removeWorker(nodeId: string, serverId: string | undefined): Promise<Removed> {
    const id = await this.#server(serverId);
    const where = id ? `server ${id}` : 'this machine';
    const docker = await this.#hosts.asIs(id);
    const node = (await this.#call(`inspect node ${nodeId} of the swarm of ${where}`, () => docker.getNode(nodeId).inspect())) as EngineNode;
    const hostname = node.Description?.Hostname ?? '';
    const server = await this.#serverOfNode(node.ID, id);
    // On this machine's swarm, an organization removes the nodes that are its own servers.
    if (!id && !server && !(await this.#isOwner())) throw ownersAlone('nodeId', `node ${node.ID} (${hostname}) is none of your organization's servers`);
    if (node.Spec.Role === 'manager') throw conflict(`Node ${node.ID} (${hostname}) is a manager of the swarm of ${where}: demote it to a worker before it is removed`);
    const running = await this.#tasks(docker, where, { 'desired-state': ['running'] });
    const before = running.filter(t => t.NodeID === node.ID);
    const existing = new Set(running.map(t => t.ID));
    // Read anew and retried when a relabel (placement by ownership) updated the node in between.
    await updateNode(
      docker,
      node.ID,
      `drain node ${node.ID} of the swarm of ${where}`,
      now => ({ ...now.Spec, Availability: 'drain' }),
      (what, fn) => this.#call(what, fn),
    );
    // cast: as in apps()
    const services = (await this.#call(`list the services of ${where}`, () => docker.listServices())) as unknown as Service[];
    const global = new Set(services.filter(s => s.Spec.Mode?.Global).map(s => s.ID));
    const names = new Map(services.map(s => [s.ID, s.Spec.Name]));

    const deadline = Date.now() + this.#drainTimeoutMs;
    let moved: Removed['moved'] = [];
    for (;;) {
      const tasks = await this.#tasks(docker, where, { 'desired-state': ['running'] });
      const left = tasks.filter(t => t.NodeID === node.ID && t.Status?.State === 'running');
      const claimed = new Set<string>();
      moved = before.map(t => {
        const next = tasks
          .filter(r => r.ServiceID === t.ServiceID && r.NodeID !== node.ID && r.Status?.State === 'running' && !existing.has(r.ID) && !claimed.has(r.ID))
          .sort((a, b) => (a.CreatedAt ?? '').localeCompare(b.CreatedAt ?? ''))[0];
        if (next) claimed.add(next.ID);
        return { service: names.get(t.ServiceID) ?? t.ServiceID, taskId: t.ID, to: next ? { taskId: next.ID, nodeId: next.NodeID!, hostname: '' } : null };
      });
      const waiting = moved.filter(m => !m.to && !global.has(before.find(t => t.ID === m.taskId)!.ServiceID));
      if (!left.length && !waiting.length) break;
      if (Date.now() > deadline) {
        throw conflict(
          `Node ${node.ID} (${hostname}) is drained but ${waiting.length || left.length} task(s) did not start elsewhere within ${Math.round(this.#drainTimeoutMs / 1000)} s (${(waiting.length ? waiting.map(m => m.service) : left.map(t => names.get(t.ServiceID) ?? t.ServiceID)).join(', ')}); the node was not removed`,
        );
      }
      await sleep(250);
    }
    const hostnames = await this.#hostnames(docker, where);
    for (const m of moved) if (m.to) m.to.hostname = hostnames.get(m.to.nodeId) ?? '';
    // The worker's own engine leaves first (when it is one of the organization's servers), so it does not go on believing it is in the swarm.
    const leftServer = server ? await this.#leaveSwarm(server) : null;
    await this.#call(`remove node ${node.ID} from the swarm of ${where}`, () => docker.getNode(node.ID).remove({ force: true }));
    this.cradle.logger.info({ nodeId: node.ID, hostname, moved: moved.length, serverId: id, left: leftServer }, 'swarm node drained and removed');
    if (leftServer) await this.#announce('serverLeftSwarm', { organizationId: this.organizationId, serverId: leftServer, managerServerId: id, nodeId: node.ID, at: new Date().toISOString() });
    return { removed: true, nodeId: node.ID, hostname, moved };
  }
}

declare module '@berth/core' {
  interface BerthEvents {
    /**
     * A server joined a swarm through cluster.joinServer (or was found a member already): the
     * manager's server (null: this machine's swarm) and the new node. Emitted durably, so the join
     * answers once subscribers gave the node what the swarm's nodes have (a registry's CA).
     */
    serverJoinedSwarm: { organizationId: string; serverId: string; managerServerId: string | null; nodeId: string; role: 'worker' | 'manager'; at: string };
    /** A server of the organization left a swarm through cluster.removeWorker (emitted durably too): what the swarm's nodes were given may go. */
    serverLeftSwarm: { organizationId: string; serverId: string; managerServerId: string | null; nodeId: string; at: string };
  }
  interface Cradle {
    /** swarm.* and cluster.* for the current request's caller (request scope only); from the cluster plugin. */
    clusterRequests: ClusterRequests;
  }
}
