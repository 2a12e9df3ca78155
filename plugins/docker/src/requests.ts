// docker.* for the current request's caller: the containers, services and tasks of one engine —
// this machine's, or a server's of the caller's organization (hosts.of(serverId), never this
// machine's engine for a serverId). What the caller reaches there:
// - on a server of its organization, everything (the server is the organization's);
// - on this machine, the containers and services Berth made for its organization (their
//   berth.organization label), unless the caller is an instance operator, who reaches everything.
// A container the caller may not reach answers as one that does not exist (404), so another
// organization's container ids and names cannot be probed. The engine's API is used throughout (no
// CLI, no shell), its errors converted by the hosts plugin's one converter.
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { pipeline, Readable } from 'node:stream';
import type Docker from 'dockerode';
import { inPool, invalidField, notFound, optionalService, RequestScope, type UploadedFile } from '@berth/core';
import { ORGANIZATION_LABEL } from '@berth/plugin-hosts';
import type { ContainerConfig, ContainerRow, MatchedContainer, NamedContainer, TaskRow, UploadInput } from './schemas.ts';
import { statOf, type ContainerStat, type EngineStats } from './stats.ts';
import { bySlot, containerRow, matchedContainer, namedContainer, stackTask, taskRow, type EngineContainer, type EngineTask } from './views.ts';

/** The label Docker's stack deploy (and Berth's swarm stacks) put on a stack's services. */
const STACK_LABEL = 'com.docker.stack.namespace';
const COMPOSE_PROJECT_LABEL = 'com.docker.compose.project';
const SERVICE_NAME_LABEL = 'com.docker.swarm.service.name';
/**
 * Stats reads in flight at once. The engine takes a second or more for each (two samples); unbounded,
 * a host with hundreds of containers would get hundreds of calls at once. Below host-ssh's default of
 * 8 channels, so a server's other requests keep one while a reading runs.
 */
const STATS_AT_ONCE = 6;

type Call = <T>(what: string, fn: () => Promise<T>) => Promise<T>;
interface EngineService {
  ID: string;
  Spec: { Name: string; Labels?: Record<string, string> };
}

/** One engine and what the caller may see on it. */
interface Reach {
  docker: Docker;
  call: Call;
  /** Label filters that keep the engine's lists to what the caller may reach (none: everything). */
  only: string[];
}

/** Registered asClass(...).scoped() as `dockerRequests`. */
export class DockerRequests extends RequestScope {
  /** Every container of the engine the caller may reach, stopped ones too (`docker ps -a`). */
  async containers(serverId: string | undefined): Promise<ContainerRow[]> {
    const reach = await this.#reach(serverId);
    return (await this.#list(reach, { all: true })).map(c => containerRow(c, serverId || undefined));
  }

  /** The engine's own object for the container (`docker inspect`). */
  async config(containerId: string, serverId: string | undefined): Promise<ContainerConfig> {
    return (await this.#container(await this.#reach(serverId), containerId)).info;
  }

  async restart(containerId: string, serverId: string | undefined): Promise<null> {
    return this.#act(containerId, serverId, 'restart', c => c.restart());
  }

  async start(containerId: string, serverId: string | undefined): Promise<null> {
    // 304: already running, which is what was asked.
    return this.#act(containerId, serverId, 'start', c => c.start().catch(unlessUnchanged));
  }

  async stop(containerId: string, serverId: string | undefined): Promise<null> {
    return this.#act(containerId, serverId, 'stop', c => c.stop().catch(unlessUnchanged));
  }

  /** Kills the container; one not running stays so (the engine's 409: nothing to kill). */
  async kill(containerId: string, serverId: string | undefined): Promise<null> {
    return this.#act(containerId, serverId, 'kill', c => c.kill().catch((e: { statusCode?: number }) => (e.statusCode === 409 ? undefined : Promise.reject(e))));
  }

  /** Removes the container, running or not (`docker rm -f`). */
  async remove(containerId: string, serverId: string | undefined): Promise<null> {
    return this.#act(containerId, serverId, 'remove', c => c.remove({ force: true }));
  }

  /** Running containers of the swarm service appName, or whose name holds appName (standalone). */
  async byAppLabel(appName: string, type: 'standalone' | 'swarm', serverId: string | undefined): Promise<NamedContainer[]> {
    const reach = await this.#reach(serverId);
    const filters: Record<string, string[]> = type === 'swarm' ? { label: [`${SERVICE_NAME_LABEL}=${appName}`] } : { name: [appName] };
    return (await this.#list(reach, { all: false, filters })).map(namedContainer);
  }

  /** A stack's running tasks, a compose project's containers, or the containers whose name starts with appName. */
  async byAppNameMatch(appName: string, appType: 'stack' | 'docker-compose' | undefined, serverId: string | undefined): Promise<MatchedContainer[]> {
    const reach = await this.#reach(serverId);
    if (appType === 'stack') {
      const services = await this.#services(reach, { label: [`${STACK_LABEL}=${appName}`] });
      const { tasks, nodes } = await this.#tasks(reach, services, { 'desired-state': ['running'] });
      return tasks.map(({ task, service }) => stackTask(task, service, nodes(task)));
    }
    if (appType === 'docker-compose') return (await this.#list(reach, { all: true, filters: { label: [`${COMPOSE_PROJECT_LABEL}=${appName}`] } })).map(matchedContainer);
    return (await this.#list(reach, { all: true })).filter(c => (c.Names ?? []).some(n => n.replace(/^\//, '').startsWith(appName))).map(matchedContainer);
  }

  /** One reading of each running container the caller may reach (`docker stats --no-stream`); one that stops meanwhile is left out. */
  async stats(serverId: string | undefined): Promise<ContainerStat[]> {
    const reach = await this.#reach(serverId);
    const running = await this.#list(reach, { all: false });
    const read = await inPool(
      STATS_AT_ONCE,
      running.map(
        c => () =>
          reach
            .call(`read the stats of container ${c.Id.slice(0, 12)}`, () => reach.docker.getContainer(c.Id).stats({ stream: false }) as Promise<EngineStats>)
            .then(
              s => statOf(c.Id, c.Names?.[0] ?? c.Id, s),
              () => null,
            ),
      ),
    );
    return read.filter((s): s is ContainerStat => s !== null);
  }

  /** The tasks of the swarm service appName (`docker service ps`). */
  async serviceTasks(appName: string, serverId: string | undefined): Promise<TaskRow[]> {
    const reach = await this.#reach(serverId);
    const services = (await this.#services(reach, { name: [appName] })).filter(s => s.Spec.Name === appName);
    const { tasks, nodes } = await this.#tasks(reach, services, {});
    return tasks.map(({ task, service }) => taskRow(task, service, nodes(task)));
  }

  /** The tasks of every service of the stack appName (`docker stack ps`). */
  async stackTasks(appName: string, serverId: string | undefined): Promise<TaskRow[]> {
    const reach = await this.#reach(serverId);
    const services = await this.#services(reach, { label: [`${STACK_LABEL}=${appName}`] });
    const { tasks, nodes } = await this.#tasks(reach, services, {});
    return tasks.map(({ task, service }) => taskRow(task, service, nodes(task)));
  }

  /**
   * Puts the uploaded file in the container at destinationPath (an existing directory there takes
   * it under its own name), through the engine's archive API: a tar stream of one entry, read
   * from the upload's temporary file as it goes.
   */
  async upload(input: UploadInput, file: UploadedFile): Promise<{ success: boolean; message: string }> {
    const target = checkedDestination(input.destinationPath);
    const reach = await this.#reach(input.serverId);
    const { id } = await this.#container(reach, input.containerId);
    const container = reach.docker.getContainer(id);
    let dir = path.posix.dirname(target);
    let name = path.posix.basename(target);
    const found = target === '/' ? 'directory' : await this.#kind(reach, container, target);
    if (found === 'directory') [dir, name] = [target, uploadName(file.filename)];
    else if (input.destinationPath.endsWith('/')) throw invalidField('destinationPath', `${target} is no directory in the container`);
    else if ((await this.#kind(reach, container, dir)) !== 'directory') throw invalidField('destinationPath', `${dir} is no directory in the container`);
    const archive = await tarOf(file, name);
    await reach.call(`put ${name} in the container ${input.containerId}`, () => container.putArchive(archive, { path: dir, noOverwriteDirNonDir: true }));
    return { success: true, message: 'File uploaded successfully' };
  }

  // ------------------------------------------------------------ helpers
  /**
   * The engine serverId names (one of the organization's servers: 404 otherwise, as one that does
   * not exist) or this machine's, with what the caller may reach there.
   */
  async #reach(serverId: string | undefined): Promise<Reach> {
    let only: string[] = [];
    if (serverId) {
      const owner = await optionalService(this.cradle, 'hostServers')?.organizationOf(serverId);
      if (owner !== this.organizationId) throw notFound(`Server ${serverId}`);
    } else if (!(await this.cradle.accounts.isInstanceOperator(this.principal))) {
      only = [`${ORGANIZATION_LABEL}=${this.organizationId}`];
    }
    const hosts = this.cradle.hosts;
    const docker = await (await hosts.of(serverId || null)).engine();
    return { docker, call: (what, fn) => hosts.call(what, fn), only };
  }

  /** The engine's container list, kept to what the caller may reach. */
  async #list(reach: Reach, opts: { all: boolean; filters?: Record<string, string[]> }): Promise<EngineContainer[]> {
    const label = [...(opts.filters?.label ?? []), ...reach.only];
    const filters = { ...opts.filters, ...(label.length ? { label } : {}) };
    return (await reach.call('list the containers', () => reach.docker.listContainers({ all: opts.all, filters }))) as EngineContainer[];
  }

  /**
   * The container the caller names — by its name, or its id or the first 12 characters of it at
   * least (a shorter prefix, which the engine would take, may name someone else's container on a
   * busy engine) — if it may reach it: NOT_FOUND otherwise, the same answer as for a name or id that
   * names nothing (an ambiguous prefix too).
   */
  async #container(reach: Reach, containerId: string): Promise<{ id: string; info: ContainerConfig }> {
    const info = (await reach.call(`inspect the container ${containerId}`, () =>
      reach.docker
        .getContainer(containerId)
        .inspect()
        .catch((e: { statusCode?: number }) => (e.statusCode === 404 || e.statusCode === 400 ? null : Promise.reject(e))),
    )) as (ContainerConfig & { Config: { Labels?: Record<string, string> | null } }) | null;
    const named = info && (info.Name === `/${containerId}` || (containerId.length >= 12 && info.Id.startsWith(containerId)));
    if (!named || (reach.only.length && info.Config.Labels?.[ORGANIZATION_LABEL] !== this.organizationId)) throw notFound(`Container ${containerId}`);
    return { id: info.Id, info };
  }

  /** Runs an action on a container the caller may reach; the peer answers nothing. */
  async #act(containerId: string, serverId: string | undefined, what: string, fn: (c: Docker.Container) => Promise<unknown>): Promise<null> {
    const reach = await this.#reach(serverId);
    const { id } = await this.#container(reach, containerId);
    await reach.call(`${what} the container ${containerId}`, () => fn(reach.docker.getContainer(id)));
    return null;
  }

  /** The swarm services matching the filters that the caller may reach. */
  async #services(reach: Reach, filters: Record<string, string[]>): Promise<EngineService[]> {
    const label = [...(filters.label ?? []), ...reach.only];
    const all = { ...filters, ...(label.length ? { label } : {}) };
    return (await reach.call('list the services', () => reach.docker.listServices({ filters: all }))) as EngineService[];
  }

  /** The tasks of these services (none: no call, which would list every task), in the CLI's order, and their nodes' host names. */
  async #tasks(reach: Reach, services: EngineService[], filters: Record<string, string[]>): Promise<{ tasks: { task: EngineTask; service: string }[]; nodes: (task: EngineTask) => string }> {
    if (!services.length) return { tasks: [], nodes: () => '' };
    const names = new Map(services.map(s => [s.ID, s.Spec.Name]));
    const tasks = (await reach.call('list the tasks', () => reach.docker.listTasks({ filters: { ...filters, service: [...names.keys()] } }))) as EngineTask[];
    const listed = (await reach.call('list the nodes', () => reach.docker.listNodes())) as { ID: string; Description?: { Hostname?: string } }[];
    const hostnames = new Map(listed.map(n => [n.ID, n.Description?.Hostname ?? n.ID]));
    return {
      tasks: tasks
        .filter(task => names.has(task.ServiceID))
        .sort(bySlot)
        .map(task => ({ task, service: names.get(task.ServiceID)! })),
      nodes: task => (task.NodeID ? (hostnames.get(task.NodeID) ?? task.NodeID) : ''),
    };
  }

  /** What a path in the container is (the engine's stat of the archive API), null when nothing is there; a link is followed once. */
  async #kind(reach: Reach, container: Docker.Container, at: string, follow = true): Promise<'directory' | 'file' | null> {
    const stat = await reach.call(`look at ${at} in the container`, async () => {
      const res = (await container.infoArchive({ path: at }).catch((e: { statusCode?: number }) => (e.statusCode === 404 ? null : Promise.reject(e)))) as
        (Readable & { headers?: Record<string, string> }) | null;
      res?.resume();
      const header = res?.headers?.['x-docker-container-path-stat'];
      return header ? (JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { mode: number; linkTarget?: string }) : null;
    });
    if (!stat) return null;
    // Go's FileMode: the directory bit is 1 << 31, the link bit 1 << 27.
    if (Math.floor(stat.mode / 2 ** 31) % 2 === 1) return 'directory';
    if (follow && Math.floor(stat.mode / 2 ** 27) % 2 === 1 && stat.linkTarget?.startsWith('/')) return this.#kind(reach, container, stat.linkTarget, false);
    return 'file';
  }
}

/** 304 (already running, already stopped): what was asked already holds. */
const unlessUnchanged = (e: { statusCode?: number }) => (e.statusCode === 304 ? undefined : Promise.reject(e));

/** The destination as a path inside the container: absolute, no . or .. segment (400 naming destinationPath otherwise). */
export function checkedDestination(destination: string): string {
  if (!destination.startsWith('/')) throw invalidField('destinationPath', 'must be an absolute path in the container (starting with /)');
  if (destination.split('/').some(segment => segment === '.' || segment === '..')) throw invalidField('destinationPath', 'must not hold . or .. segments: the path stays where it says');
  return path.posix.normalize(destination).replace(/(.)\/$/, '$1');
}

/** The uploaded file's own name, for a directory destination: its last segment, letters, digits, . _ - kept. */
export function uploadName(filename: string): string {
  const name = (filename.split(/[\\/]/).pop() ?? '').replace(/[^a-zA-Z0-9._-]/g, '_');
  return /^\.*$/.test(name) ? 'upload' : name.slice(0, 255);
}

/** A tar stream of one entry, the upload, read from its temporary file as the engine takes it (tar-stream loaded on the first upload). */
async function tarOf(file: UploadedFile, name: string): Promise<Readable> {
  const { default: tar } = await import('tar-stream');
  const pack = tar.pack();
  const entry = pack.entry({ name, size: file.bytes, mode: 0o644, mtime: new Date() }, err => (err ? pack.destroy(err) : pack.finalize()));
  pipeline(createReadStream(file.path), entry, err => {
    if (err) pack.destroy(err);
  });
  // tar-stream's streams are streamx's: a Node stream of it for the engine's request.
  return Readable.from(pack);
}

declare module '@berth/core' {
  interface Cradle {
    /** docker.* for the current request's caller (request scope only). */
    dockerRequests: DockerRequests;
  }
}
