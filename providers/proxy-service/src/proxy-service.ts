// The proxy as a Swarm service, the same for every proxy provider that runs one image with a
// config directory bind-mounted: created or updated to the wanted spec, its ports published in
// host mode (the ingress mesh needs IPVS), on the platform network and each organization's network,
// labelled as Berth's. A
// service of that name that is not Berth's proxy is refused and left alone.
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type Docker from 'dockerode';
import type { ProxyEngine, ProxyServerHost, ProxyServiceSettings } from '@berth/core';

const SETTINGS_FILE = 'service.json';

/** The service settings kept in the proxy's config directory (defaults when none were saved). */
export async function readServiceSettings(configDir: string): Promise<ProxyServiceSettings> {
  const file = path.join(configDir, SETTINGS_FILE);
  const saved = existsSync(file) ? (JSON.parse(await readFile(file, 'utf8')) as Partial<ProxyServiceSettings>) : {};
  return { dashboard: saved.dashboard ?? false, additionalPorts: saved.additionalPorts ?? [], env: saved.env ?? '' };
}

export async function writeServiceSettings(configDir: string, patch: Partial<ProxyServiceSettings>): Promise<ProxyServiceSettings> {
  const next = { ...(await readServiceSettings(configDir)), ...patch };
  await mkdir(configDir, { recursive: true, mode: 0o700 });
  await writeFile(path.join(configDir, SETTINGS_FILE), `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  return next;
}

/** KEY=value lines → the engine's Env list (blank lines and # comments left out). */
export function envLines(env: string): string[] {
  return env
    .split('\n')
    .map(l => l.trim())
    .filter(l => l && !l.startsWith('#') && /^[A-Za-z_][A-Za-z0-9_]*=/.test(l));
}

export interface ProxyServiceSpec {
  name: string;
  image: string;
  args: string[];
  env?: string[];
  /** host path → container path */
  binds: { source: string; target: string; readOnly?: boolean }[];
  ports: { target: number; published: number; protocol?: 'tcp' | 'udp' | 'sctp' }[];
}

/** An appName as a proxy's file of a workload may be named after. */
const APP_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

/** Throws unless appName may name a workload's file in the proxy's directory (no path separators, no dot segments). */
export function assertFileAppName(appName: string): void {
  if (!APP_NAME.test(appName)) throw new Error(`"${appName}" is not a valid appName`);
}

/** Where the proxy runs: its service name and image, its http and https ports on the host. */
export interface ProxyServiceHost {
  name: string;
  image: string;
  httpPort: number;
  httpsPort: number;
}

/**
 * A proxy's service spec: the provider's own program, environment and directories, with the
 * service settings' environment lines; ports 80 and 443 on the host's http and https ports,
 * the provider's own ports, then the settings' additional ports.
 */
export async function proxyServiceSpec(
  configDir: string,
  host: ProxyServiceHost,
  ownOf: (settings: ProxyServiceSettings) => Pick<ProxyServiceSpec, 'args' | 'binds'> & { env?: string[]; ports?: ProxyServiceSpec['ports'] },
): Promise<ProxyServiceSpec> {
  const settings = await readServiceSettings(configDir);
  const own = ownOf(settings);
  return {
    name: host.name,
    image: host.image,
    args: own.args,
    env: [...envLines(settings.env), ...(own.env ?? [])],
    binds: own.binds,
    ports: [
      { target: 80, published: host.httpPort },
      { target: 443, published: host.httpsPort },
      ...(own.ports ?? []),
      ...settings.additionalPorts.map(p => ({ target: p.targetPort, published: p.publishedPort, protocol: p.protocol })),
    ],
  };
}

const PROXY_LABEL = 'berth.proxy';
const SPEC_LABEL = 'berth.proxy.spec';

function specOf(s: ProxyServiceSpec, engine: ProxyEngine, nodeId: string | undefined): Record<string, unknown> {
  const labels = { ...engine.labels, [PROXY_LABEL]: s.name };
  return {
    Name: s.name,
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: {
        Image: s.image,
        Args: s.args,
        Env: s.env ?? [],
        Labels: labels,
        Mounts: s.binds.map(b => ({ Type: 'bind', Source: b.source, Target: b.target, ReadOnly: b.readOnly ?? false })),
        Init: true,
        StopGracePeriod: 2_000_000_000,
      },
      // The platform network, and every organization's network, whose workloads it reaches by name.
      Networks: [engine.network, ...(engine.networks ?? []).filter(n => n !== engine.network)].map(Target => ({ Target })),
      RestartPolicy: { Condition: 'any', Delay: 1_000_000_000 },
      // Its files are bound from this engine's machine and Berth reaches its container through this
      // engine: on a swarm of several nodes it runs on this one.
      ...(nodeId ? { Placement: { Constraints: [`node.id == ${nodeId}`] } } : {}),
    },
    Mode: { Replicated: { Replicas: 1 } },
    // Host-mode ports cannot be held by two tasks: the old one stops first.
    UpdateConfig: { Parallelism: 1, Order: 'stop-first' },
    EndpointSpec: { Mode: 'dnsrr', Ports: s.ports.map(p => ({ Protocol: p.protocol ?? 'tcp', TargetPort: p.target, PublishedPort: p.published, PublishMode: 'host' })) },
  };
}

/** Creates or updates the service (force: new tasks even when nothing changed); answers whether it changed. */
export async function ensureProxyService(engine: ProxyEngine, s: ProxyServiceSpec, force = false): Promise<boolean> {
  const docker = engine.docker;
  await engine.provideImage?.(s.image);
  const nodeId = ((await docker.info()) as { Swarm?: { NodeID?: string } }).Swarm?.NodeID || undefined;
  const wanted = specOf(s, engine, nodeId) as Record<string, unknown> & { Labels: Record<string, string>; TaskTemplate: Record<string, unknown> };
  const digest = hash(JSON.stringify(wanted));
  wanted.Labels = { ...wanted.Labels, [SPEC_LABEL]: digest };
  const service = docker.getService(s.name);
  const current = (await service.inspect().catch((e: { statusCode?: number }) => (e.statusCode === 404 ? null : Promise.reject(e)))) as {
    Version: { Index: number };
    Spec: { Labels?: Record<string, string>; TaskTemplate?: { ForceUpdate?: number } };
  } | null;
  if (!current) {
    await docker.createService(wanted);
    return true;
  }
  if (current.Spec.Labels?.[PROXY_LABEL] !== s.name) {
    throw new Error(`A service named ${s.name} exists on this engine and is not Berth's proxy: remove it or choose another proxy service name`);
  }
  if (!force && current.Spec.Labels?.[SPEC_LABEL] === digest) return false;
  const forceUpdate = (current.Spec.TaskTemplate?.ForceUpdate ?? 0) + (force ? 1 : 0);
  await service.update({ version: current.Version.Index, ...wanted, TaskTemplate: { ...wanted.TaskTemplate, ForceUpdate: forceUpdate } });
  return true;
}

function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16);
}

/** The running container of the service's task on this engine, once there is one (deadline in ms). */
export async function runningContainer(docker: Docker, name: string, deadlineMs: number): Promise<Docker.Container> {
  const until = Date.now() + deadlineMs;
  let last = 'no task yet';
  for (;;) {
    const tasks = (await docker.listTasks({ filters: JSON.stringify({ service: [name], 'desired-state': ['running'] }) })) as {
      Status?: { State?: string; Err?: string; ContainerStatus?: { ContainerID?: string } };
    }[];
    const running = tasks.find(t => t.Status?.State === 'running' && t.Status.ContainerStatus?.ContainerID);
    if (running) return docker.getContainer(running.Status!.ContainerStatus!.ContainerID!);
    const t = tasks[0];
    if (t) last = `task ${t.Status?.State ?? '?'}${t.Status?.Err ? `: ${t.Status.Err}` : ''}`;
    if (Date.now() > until) throw new Error(`The proxy service ${name} did not start (${last})`);
    await new Promise(r => setTimeout(r, 200));
  }
}

/** Runs a command (argument array) in the container; answers its output, throws with it on a non-zero exit. */
export async function execIn(container: Docker.Container, cmd: string[]): Promise<string> {
  const exec = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  // Demultiplex the engine's framed stream (8-byte headers).
  const raw = Buffer.concat(chunks);
  let out = '';
  for (let i = 0; i + 8 <= raw.length;) {
    const size = raw.readUInt32BE(i + 4);
    out += raw.subarray(i + 8, i + 8 + size).toString('utf8');
    i += 8 + size;
  }
  const { ExitCode } = await exec.inspect();
  if (ExitCode !== 0) throw new Error(out.trim() || `${cmd[0]} exited with ${ExitCode}`);
  return out;
}

/** Writes the whole file then renames it into place: the proxy never reads half a file. */
export async function writeAtomic(file: string, text: string, mode = 0o600): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(`${file}.tmp`, text, { mode });
  await rename(`${file}.tmp`, file);
}

/** Runs changes one at a time, in the order they were asked for (a failed one does not stop the next). */
export class Serial {
  #queue: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(fn, fn);
    this.#queue = next.catch(() => {});
    return next;
  }
}

/**
 * A proxy's directory on a server, written through the server's command runner (argument arrays:
 * paths are arguments of fixed scripts, never part of them). The directory is `.berth/proxy/<id>`
 * in the login's home, so a login without root (in the docker group) keeps it too.
 */
export class ServerFiles {
  readonly #server: ProxyServerHost;
  readonly #id: string;
  #dir?: Promise<string>;

  constructor(server: ProxyServerHost, id: string) {
    this.#server = server;
    this.#id = id;
  }

  /** The directory's absolute path on the server (what the service's bind mounts name). */
  dir(): Promise<string> {
    this.#dir ??= this.#do(['sh', '-c', 'printf %s "$HOME"'], "find the login's home").then(home => {
      if (!home.startsWith('/')) throw new Error(`the login's home on server ${this.#server.serverId} is not an absolute path ("${home}")`);
      return path.posix.join(home, '.berth', 'proxy', this.#id);
    });
    this.#dir.catch(() => (this.#dir = undefined));
    return this.#dir;
  }

  /** Writes the file (its directories made), whole, then renamed into place. */
  async write(relative: string, text: string, mode = '600'): Promise<void> {
    const file = path.posix.join(await this.dir(), relative);
    await this.#do(['sh', '-c', 'umask 077 && mkdir -p "$(dirname "$1")" && cat > "$1.tmp" && chmod "$2" "$1.tmp" && mv "$1.tmp" "$1"', 'sh', file, mode], `write ${relative}`, text);
  }

  /** Makes directories below the proxy's directory. */
  async mkdir(...relative: string[]): Promise<void> {
    const dir = await this.dir();
    await this.#do(['mkdir', '-p', '-m', '700', dir, ...relative.map(r => path.posix.join(dir, r))], 'make its directories');
  }

  /** Removes a file or directory below the proxy's directory. */
  async remove(relative: string): Promise<void> {
    await this.#do(['rm', '-rf', '--', path.posix.join(await this.dir(), relative)], `remove ${relative}`);
  }

  /** The file's text; null when there is none. */
  async read(relative: string): Promise<string | null> {
    const result = await this.#server.run(['cat', '--', path.posix.join(await this.dir(), relative)]);
    return result.code === 0 ? result.stdout : null;
  }

  /** The names in a directory; [] when there is none. */
  async list(relative: string): Promise<string[]> {
    const result = await this.#server.run(['ls', '-1A', '--', path.posix.join(await this.dir(), relative)]);
    return result.code === 0 ? result.stdout.split('\n').filter(Boolean) : [];
  }

  async #do(argv: string[], what: string, stdin?: string): Promise<string> {
    const result = await this.#server.run(argv, stdin === undefined ? {} : { stdin });
    if (result.code !== 0) throw new Error(`could not ${what} on server ${this.#server.serverId}: ${result.stderr.trim() || `exit ${result.code}`}`);
    return result.stdout;
  }
}
