// Runs workloads as Swarm services on one engine and waits for the outcome: a deploy is done
// when Swarm reports the new version's tasks running, and fails as soon as one of them fails,
// with the engine's own reason ("No such image: ...", "starting container failed: ...").
//
// Which tasks belong to the new version: every deploy and restart raises the spec's
// TaskTemplate.ForceUpdate (so the tasks are always replaced, as a redeploy is expected to),
// and each task carries a copy of the TaskTemplate it was created from. Tasks whose copy has
// the new ForceUpdate are the new version's, whatever the engine's clock or history.
//
// Every call on an existing service first checks that its labels name the record the call is
// for (`owner`, the berth.id label): a service of that name that is not Berth's for this very
// record is refused with 409 and never read, scaled, updated or removed.
//
// Engine failures pass through ContainerHosts.call (404 → NOT_FOUND, 409 → CONFLICT, else a
// logged 500); a spec the engine refuses (400) is BAD_REQUEST with the engine's reason.
// Registry credentials go to the engine in its X-Registry-Auth header and nowhere else.
import { setTimeout as sleep } from 'node:timers/promises';
import type Docker from 'dockerode';
import { DEFAULT_PLATFORM_NETWORK, engineCall, type EngineCalls } from '@berth/plugin-hosts';
import type { WorkloadService } from '../services.ts';
import { checkServiceName, toServiceSpec, updateOrder, type ServiceSpec } from './service-spec.ts';
import { ID_LABEL, ORGANIZATION_LABEL, assertOwned } from '../owners.ts';
import { withOrganizationConstraint } from '@berth/plugin-hosts';
import { BerthError, badRequest, notFound } from '@berth/core';

export interface RegistryAuth {
  username: string;
  password: string;
  serveraddress: string;
}

export interface WaitOptions {
  /** Aborting stops the wait at once; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Progress lines (state changes only). */
  log?: (line: string) => void;
  /** Give up waiting after this long (default 10 minutes). */
  timeoutMs?: number;
  /**
   * How long the new tasks must keep running before the wait succeeds (default 2 s): a
   * container that exits right after starting is a failed deploy, not a running one.
   */
  settleMs?: number;
}

/** Whose service a call is for: the record id the service's berth.id label must name. */
export interface Owned {
  owner: string;
}

export interface DeployOptions extends WaitOptions {
  /** Credentials for the image's registry; the workload's registryAuth otherwise. */
  registryAuth?: RegistryAuth | null;
}

export interface DeployResult {
  serviceId: string;
  /** True when the service did not exist before. */
  created: boolean;
  /** The ForceUpdate value that marks this deploy's tasks. */
  forceUpdate: number;
  tasks: TaskSummary[];
}

/** One task as `docker service ps` shows it. */
export interface TaskSummary {
  id: string;
  /** Replica number (replicated mode); null in global mode. */
  slot: number | null;
  nodeId: string | null;
  /** new, pending, assigned, accepted, preparing, starting, running, complete, failed, shutdown, rejected, orphaned, remove. */
  state: string;
  desiredState: string;
  /** The engine's short status line ("started", "preparing"...). */
  message: string;
  /** Why the task failed or was rejected, as the engine says it. */
  error: string | null;
  exitCode: number | null;
  containerId: string | null;
  image: string | null;
  /** The TaskTemplate.ForceUpdate the task was created from (its version, for Berth). */
  forceUpdate: number;
  createdAt: string;
  updatedAt: string;
}

export interface LogOptions {
  /** Only the last n lines of each task (default all). */
  tail?: number;
  /**
   * Only lines after this moment (to the second): a Date, Unix seconds, an ISO date, or a span back from now
   * as the peer's clients send it ("30s", "5m", "2h", "1d"); "all" or "" means everything.
   */
  since?: Date | number | string;
  /** Prefix each line with the engine's RFC 3339 timestamp. */
  timestamps?: boolean;
  signal?: AbortSignal;
}

/** A task of the new version failed or the update was rolled back; the message is the engine's reason. */
export class SwarmTaskError extends BerthError {
  readonly task: TaskSummary | null;
  constructor(message: string, task: TaskSummary | null) {
    super('INTERNAL_SERVER_ERROR', message);
    this.name = 'SwarmTaskError';
    this.task = task;
  }
}

interface EngineTask {
  ID: string;
  ServiceID: string;
  Slot?: number;
  NodeID?: string;
  DesiredState: string;
  CreatedAt: string;
  UpdatedAt: string;
  Spec?: { ForceUpdate?: number; ContainerSpec?: { Image?: string } };
  Status?: { State?: string; Message?: string; Err?: string; ContainerStatus?: { ContainerID?: string; ExitCode?: number } };
}

/** What an update sent: the ForceUpdate that marks its tasks, and the tasks that existed before it. */
interface Sent {
  forceUpdate: number;
  before: Set<string>;
}

interface EngineService {
  ID: string;
  Version: { Index: number };
  Spec: ServiceSpec & { TaskTemplate?: { ForceUpdate?: number }; Mode?: ServiceSpec['Mode'] };
  PreviousSpec?: { TaskTemplate?: { ForceUpdate?: number } };
  UpdateStatus?: { State?: string; Message?: string };
}

interface EngineError {
  statusCode?: number;
  json?: { message?: string };
  reason?: string;
  message?: string;
}

const ACTIVE = new Set(['new', 'allocated', 'pending', 'assigned', 'accepted', 'preparing', 'ready', 'starting', 'running']);
const FAILED = new Set(['failed', 'rejected']);
const ROLLED_BACK = new Set(['rollback_started', 'rollback_paused', 'rollback_completed', 'paused']);
const DEFAULT_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_SETTLE_MS = 2000;

/** What admission sees of a deploy: the spec about to be sent, the registry credentials it goes with, the run's log. */
export type Admit = (workload: WorkloadService, deploy: { spec: ServiceSpec; auth?: RegistryAuth; log(line: string): void }) => Promise<void>;

export interface SwarmRunnerOptions {
  /** The network every workload joins unless detached (default: the hosts' platformNetwork). */
  platformNetwork?: string;
  /** How often task states are read while waiting (default 300 ms). */
  pollMs?: number;
  /** Checks a workload before its service is created or updated (user workloads: the host access policy, the image on every node). */
  admit?: Admit;
}

export class SwarmRunner {
  readonly #docker: Docker;
  readonly #hosts: EngineCalls;
  readonly #network: string;
  readonly #pollMs: number;
  readonly #admit: Admit;

  constructor(docker: Docker, hosts: EngineCalls, options: SwarmRunnerOptions = {}) {
    this.#admit = options.admit ?? (async () => {});
    this.#docker = docker;
    this.#hosts = hosts;
    this.#network = options.platformNetwork ?? hosts.platformNetwork;
    this.#pollMs = options.pollMs ?? 300;
  }

  /**
   * Creates the service or updates it to the workload's spec, then waits until the new
   * version's tasks run (all replicas; for 0 replicas, until none runs). Rejects with
   * SwarmTaskError as soon as a task of the new version fails, with the signal's reason
   * when aborted.
   */
  async deployService(workload: WorkloadService, opts: DeployOptions = {}): Promise<DeployResult> {
    const log = opts.log ?? (() => {});
    const spec = toServiceSpec(workload, { platformNetwork: this.#network });
    const auth = opts.registryAuth ?? workload.registryAuth ?? undefined;
    await this.#admit(workload, { spec, auth, log });
    const name = workload.name;
    opts.signal?.throwIfAborted();

    let created = false;
    let sent: Sent = { forceUpdate: 0, before: new Set() };
    let serviceId: string;
    const current = await this.#owned(name, workload.ownerLabels[ID_LABEL] ?? '');
    if (!current) {
      log(`Creating service ${name} (${workload.image})`);
      const service = await this.#call(`create service ${name}`, () => (auth ? this.#docker.createService(auth, spec) : this.#docker.createService(spec)));
      serviceId = service.id;
      created = true;
    } else {
      serviceId = current.ID;
      const { order, reason } = updateOrder(workload);
      log(`Update order ${order}: ${reason}`);
      sent = await this.#update(
        name,
        current,
        (_base, next) => ({ spec: { ...spec, TaskTemplate: { ...spec.TaskTemplate, ForceUpdate: next } }, forceUpdate: next }),
        auth,
        log,
        `Updating service ${name} (${workload.image})`,
      );
    }
    const tasks = await this.#waitForVersion(name, sent, opts);
    return { serviceId, created, forceUpdate: sent.forceUpdate, tasks };
  }

  /** Sets the replica count and waits until that many tasks run. Global-mode services cannot be scaled. */
  async scaleService(name: string, replicas: number, opts: WaitOptions & Owned): Promise<void> {
    checkServiceName(name);
    if (!Number.isInteger(replicas) || replicas < 0) {
      throw badRequest(`Invalid replicas ${String(replicas)}: use a whole number, 0 or more`, [{ path: ['replicas'], message: 'replicas: a whole number, 0 or more' }]);
    }
    const current = await this.#owned(name, opts.owner);
    if (!current) throw notFound(`Service ${name}`);
    if (!current.Spec.Mode?.Replicated) throw badRequest(`Service ${name} does not run in replicated mode: it cannot be scaled`);
    (opts.log ?? (() => {}))(`Scaling service ${name} to ${replicas}`);
    const sent = await this.#update(
      name,
      current,
      base => ({ spec: { ...base.Spec, Mode: { Replicated: { Replicas: replicas } } }, forceUpdate: base.Spec.TaskTemplate?.ForceUpdate ?? 0 }),
      undefined,
      () => {},
    );
    // Scaling keeps the running tasks: every task of the current template counts.
    await this.#waitForVersion(name, sent, opts);
  }

  /** Replaces every task (ForceUpdate + 1) and waits until the new ones run. */
  async restartService(name: string, opts: WaitOptions & Owned): Promise<void> {
    checkServiceName(name);
    const current = await this.#owned(name, opts.owner);
    if (!current) throw notFound(`Service ${name}`);
    const sent = await this.#update(
      name,
      current,
      (base, next) => ({ spec: { ...base.Spec, TaskTemplate: { ...base.Spec.TaskTemplate, ForceUpdate: next } }, forceUpdate: next }),
      undefined,
      opts.log ?? (() => {}),
      `Restarting service ${name}`,
    );
    await this.#waitForVersion(name, sent, opts);
  }

  /**
   * Removes the service (absent is fine: answers false) and waits, up to timeoutMs (default
   * 60 s), until its containers are gone, so that its volumes and ports are free again.
   */
  /** The names of the services labelled as the record's (its current appName, and former ones still running). */
  async servicesOf(owner: string): Promise<string[]> {
    const services = await this.#call('list services', () => this.#docker.listServices({ filters: { label: [`${ID_LABEL}=${owner}`] } }));
    return services.map(s => s.Spec?.Name ?? '').filter(Boolean);
  }

  async removeService(name: string, opts: WaitOptions & Owned): Promise<boolean> {
    checkServiceName(name);
    const current = await this.#owned(name, opts.owner);
    if (!current) return false;
    const removed = await this.#call(`remove service ${name}`, async () => {
      try {
        // By id: the service checked above, never one created under its name meanwhile.
        await this.#docker.getService(current.ID).remove();
        return true;
      } catch (e) {
        if ((e as EngineError).statusCode === 404) return false;
        throw e;
      }
    });
    if (!removed) return false;
    (opts.log ?? (() => {}))(`Removed service ${name}`);
    const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
    while (Date.now() < deadline) {
      const left = await this.#call(`list the containers of service ${name}`, () => this.#docker.listContainers({ all: true, filters: { label: [`com.docker.swarm.service.name=${name}`] } }));
      if (left.length === 0) break;
      await this.#pause(opts.signal);
    }
    return true;
  }

  /** Whether the record's service exists; CONFLICT when a service of that name is not the record's. */
  async serviceExists(name: string, opts: Owned): Promise<boolean> {
    checkServiceName(name);
    return (await this.#owned(name, opts.owner)) !== null;
  }

  /** The service's tasks, newest first within each slot; [] when the service does not exist. */
  async serviceTasks(name: string, opts: Owned): Promise<TaskSummary[]> {
    checkServiceName(name);
    const service = await this.#owned(name, opts.owner);
    if (!service) return [];
    return (await this.#tasks(service.ID)).map(summarize);
  }

  /** The service's log (stdout and stderr of all its tasks) as text. */
  async serviceLogs(name: string, opts: LogOptions & Owned): Promise<string> {
    checkServiceName(name);
    if (opts.tail !== undefined && (!Number.isInteger(opts.tail) || opts.tail < 0)) {
      throw badRequest(`Invalid tail ${String(opts.tail)}: use a whole number, 0 or more`, [{ path: ['tail'], message: 'tail: a whole number, 0 or more' }]);
    }
    const since = toUnixSeconds(opts.since);
    const service = await this.#owned(name, opts.owner);
    if (!service) throw notFound(`Service ${name}`);
    const raw = await this.#call(
      `read the logs of service ${name}`,
      () =>
        this.#docker
          .getService(service.ID)
          .logs({
            stdout: true,
            stderr: true,
            follow: false,
            timestamps: opts.timestamps ?? false,
            tail: opts.tail ?? 'all',
            ...(since === undefined ? {} : { since }),
            abortSignal: opts.signal,
          } as Docker.ContainerLogsOptions) as unknown as Promise<Buffer | string>, // cast: without follow, dockerode answers the bytes, not a stream
    );
    return demux(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw)));
  }

  /** The service if it exists and is the owner's; CONFLICT when the name is taken by anything else. */
  async #owned(name: string, owner: string): Promise<EngineService | null> {
    const service = await this.#inspect(name);
    if (service) assertOwned('service', name, service.Spec.Labels, owner);
    return service;
  }

  async #inspect(name: string): Promise<EngineService | null> {
    return this.#call(`inspect service ${name}`, async () => {
      try {
        return (await this.#docker.getService(name).inspect()) as EngineService;
      } catch (e) {
        if ((e as EngineError).statusCode === 404) return null;
        throw e;
      }
    });
  }

  async #tasks(serviceId: string): Promise<EngineTask[]> {
    const tasks = (await this.#call('list tasks', () => this.#docker.listTasks({ filters: { service: [serviceId] } }))) as EngineTask[];
    return tasks.filter(t => t.ServiceID === serviceId).sort((a, b) => (a.Slot ?? 0) - (b.Slot ?? 0) || b.CreatedAt.localeCompare(a.CreatedAt));
  }

  /**
   * Sends an update built from the service as it is now, retrying when another writer moved
   * the version meanwhile ("update out of sequence"). `build` gets a ForceUpdate value no task
   * of the service has carried yet: after a rollback the spec's own value goes back down, and
   * the failed tasks of the rolled-back version must not pass for the next one's.
   */
  async #update(
    name: string,
    current: EngineService,
    build: (base: EngineService, nextForceUpdate: number) => { spec: ServiceSpec; forceUpdate: number },
    auth: RegistryAuth | undefined,
    log: (line: string) => void,
    line?: string,
  ): Promise<Sent> {
    let base = current;
    for (let attempt = 1; ; attempt++) {
      const before = await this.#tasks(base.ID);
      const highest = Math.max(base.Spec.TaskTemplate?.ForceUpdate ?? 0, base.PreviousSpec?.TaskTemplate?.ForceUpdate ?? 0, ...before.map(t => t.Spec?.ForceUpdate ?? 0));
      const built = build(base, highest + 1);
      const { forceUpdate } = built;
      // A scale or restart sends the engine's spec back: one made before placement by ownership gains its organization's constraint.
      const spec = withOwnersPlacement(built.spec);
      if (line) log(`${line}, version ${base.Version.Index}`);
      try {
        const answer = await this.#call(`update service ${name}`, async () => {
          const opts = { _query: { version: base.Version.Index }, _body: spec };
          // cast: dockerode takes (auth, options) at run time; its typings only know (options).
          const service = this.#docker.getService(base.ID) as unknown as { update(a: RegistryAuth | undefined, o: object): Promise<{ Warnings?: string[] | null } | undefined> };
          return service.update(auth, opts);
        });
        for (const warning of answer?.Warnings ?? []) log(`Docker: ${warning}`);
        return { forceUpdate, before: new Set(before.map(t => t.ID)) };
      } catch (e) {
        if (attempt >= 3 || !(e instanceof OutOfSequence)) throw e;
        // By id: the service whose owner was checked, whatever holds its name now.
        const again = await this.#inspect(base.ID);
        if (!again) throw notFound(`Service ${name}`);
        base = again;
      }
    }
  }

  /** Waits for the tasks of the spec just sent; only tasks that did not exist before it can fail it. */
  async #waitForVersion(name: string, { forceUpdate, before }: Sent, opts: WaitOptions): Promise<TaskSummary[]> {
    const log = opts.log ?? (() => {});
    const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const settleMs = opts.settleMs ?? DEFAULT_SETTLE_MS;
    let last = '';
    let doneAt: number | null = null;
    for (;;) {
      opts.signal?.throwIfAborted();
      const service = await this.#inspect(name);
      if (!service) throw new SwarmTaskError(`Service ${name} was removed while it was being deployed`, null);
      const all = (await this.#tasks(service.ID)).map(summarize);
      const fresh = all.filter(t => t.forceUpdate === forceUpdate);
      const added = fresh.filter(t => !before.has(t.id));
      const failed = added.find(t => FAILED.has(t.state));
      if (failed) throw new SwarmTaskError(`Service ${name}: the new version's task ${failed.state}: ${failed.error ?? failed.message}`, failed);
      const update = service.UpdateStatus;
      if (update?.State && ROLLED_BACK.has(update.State)) {
        throw new SwarmTaskError(`Service ${name}: the update was ${update.State.replace('_', ' ')}${update.Message ? `: ${update.Message}` : ''}`, null);
      }
      if ((service.Spec.TaskTemplate?.ForceUpdate ?? 0) !== forceUpdate) {
        throw new SwarmTaskError(`Service ${name} was changed by another update while this one was waiting for its tasks`, null);
      }

      const mode = service.Spec.Mode ?? {};
      const running = fresh.filter(t => t.state === 'running' && t.desiredState === 'running');
      let done: boolean;
      let progress: string;
      if (mode.Replicated) {
        const want = mode.Replicated.Replicas ?? 1;
        if (want === 0) {
          const active = all.filter(t => ACTIVE.has(t.state));
          done = active.length === 0;
          progress = `${active.length} task(s) still stopping`;
        } else {
          // A task that ends by itself is a failure for a long-running service.
          const ended = added.find(t => t.state === 'complete');
          if (ended) throw new SwarmTaskError(`Service ${name}: the new version's task exited (code ${ended.exitCode ?? 0}) instead of running`, ended);
          done = running.length >= want;
          progress = `${running.length}/${want} new task(s) running`;
        }
      } else if (mode.Global) {
        const pending = fresh.filter(t => t.desiredState === 'running' && t.state !== 'running');
        done = running.length > 0 && pending.length === 0;
        progress = `${running.length} new task(s) running, ${pending.length} starting`;
      } else {
        // Jobs: done when the new version's tasks have all ended, at least one of them complete.
        done = fresh.some(t => t.state === 'complete') && !fresh.some(t => ACTIVE.has(t.state));
        progress = `${fresh.filter(t => t.state === 'complete').length} job task(s) complete`;
      }
      const states = [...new Set(fresh.map(t => t.state))].join(', ');
      const line = `Service ${name}: ${progress}${states ? ` (${states})` : ''}`;
      if (line !== last) log(line);
      last = line;
      if (!done) doneAt = null;
      else if (doneAt === null) doneAt = Date.now();
      if (doneAt !== null && (running.length === 0 || Date.now() - doneAt >= settleMs)) return all;
      if (Date.now() >= deadline) {
        throw new SwarmTaskError(`Service ${name}: the new version was not running after ${Math.round((opts.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000)} s (${progress})`, fresh[0] ?? null);
      }
      await this.#pause(opts.signal);
    }
  }

  async #pause(signal: AbortSignal | undefined): Promise<void> {
    try {
      await sleep(this.#pollMs, undefined, { signal });
    } catch {
      signal?.throwIfAborted();
    }
  }

  /** hosts.call, with the engine's refusals of a spec (400) as BAD_REQUEST and a retryable version clash. */
  #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return this.#hosts.call(what, async () => {
      try {
        return await fn();
      } catch (e) {
        const err = e as EngineError;
        const detail = err.json?.message ?? err.reason ?? err.message ?? '';
        if (/update out of sequence/i.test(detail)) throw new OutOfSequence();
        if (err.statusCode === 400) throw badRequest(`Docker refused to ${what}: ${detail}`);
        throw e;
      }
    });
  }
}

// The same operations as functions of an engine client, for callers that hold a Docker client
// rather than a runner. Pass `hosts` for its error conversion and logging; without it engine
// failures still become domain errors, with the engine's detail as the error's cause.
type Engine = { hosts?: EngineCalls; platformNetwork?: string };
const runnerFor = (docker: Docker, opts: Engine = {}) => new SwarmRunner(docker, opts.hosts ?? bareHosts(), { platformNetwork: opts.platformNetwork });

export const deployService = (docker: Docker, workload: WorkloadService, opts: DeployOptions & Engine = {}) => runnerFor(docker, opts).deployService(workload, opts);
export const scaleService = (docker: Docker, name: string, replicas: number, opts: WaitOptions & Owned & Engine) => runnerFor(docker, opts).scaleService(name, replicas, opts);
export const restartService = (docker: Docker, name: string, opts: WaitOptions & Owned & Engine) => runnerFor(docker, opts).restartService(name, opts);
export const removeService = (docker: Docker, name: string, opts: WaitOptions & Owned & Engine) => runnerFor(docker, opts).removeService(name, opts);
export const serviceExists = (docker: Docker, name: string, opts: Owned & Engine) => runnerFor(docker, opts).serviceExists(name, opts);
export const serviceTasks = (docker: Docker, name: string, opts: Owned & Engine) => runnerFor(docker, opts).serviceTasks(name, opts);
export const serviceLogs = (docker: Docker, name: string, opts: LogOptions & Owned & Engine) => runnerFor(docker, opts).serviceLogs(name, opts);

function bareHosts(): EngineCalls {
  return { platformNetwork: DEFAULT_PLATFORM_NETWORK, call: (what, fn) => engineCall(undefined, what, fn) };
}

class OutOfSequence extends BerthError {
  constructor() {
    super('CONFLICT', 'The service was updated by someone else meanwhile');
  }
}

function summarize(t: EngineTask): TaskSummary {
  const status = t.Status ?? {};
  return {
    id: t.ID,
    slot: t.Slot ?? null,
    nodeId: t.NodeID ?? null,
    state: status.State ?? 'unknown',
    desiredState: t.DesiredState,
    message: status.Message ?? '',
    error: status.Err || null,
    exitCode: status.ContainerStatus?.ExitCode ?? null,
    containerId: status.ContainerStatus?.ContainerID || null,
    image: t.Spec?.ContainerSpec?.Image ?? null,
    forceUpdate: t.Spec?.ForceUpdate ?? 0,
    createdAt: t.CreatedAt,
    updatedAt: t.UpdatedAt,
  };
}

const SPAN = /^(\d+)\s*(s|m|h|d)$/;
const SPAN_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

function toUnixSeconds(since: Date | number | string | undefined): number | undefined {
  const bad = () =>
    badRequest(`Invalid since "${String(since)}": use a date, Unix seconds or a span such as 30s, 5m, 2h, 1d`, [{ path: ['since'], message: 'since: a date, Unix seconds or a span such as 5m' }]);
  if (since === undefined) return undefined;
  if (since instanceof Date) {
    if (Number.isNaN(since.getTime())) throw bad();
    return Math.floor(since.getTime() / 1000);
  }
  if (typeof since === 'number') {
    if (!Number.isFinite(since) || since < 0) throw bad();
    return Math.floor(since);
  }
  const text = since.trim();
  if (text === '' || text === 'all') return undefined;
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.floor(Number(text));
  const span = SPAN.exec(text);
  if (span) return Math.floor(Date.now() / 1000) - Number(span[1]) * SPAN_SECONDS[span[2]!]!;
  const date = Date.parse(text);
  if (Number.isNaN(date)) throw bad();
  return Math.floor(date / 1000);
}

/**
 * The engine multiplexes stdout and stderr into frames (1 byte stream, 3 zero bytes, a
 * 4-byte big-endian length, the payload); a service with a TTY sends the bare text.
 */
export function demux(buffer: Buffer): string {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const stream = buffer[offset]!;
    if (stream > 2 || buffer[offset + 1] !== 0 || buffer[offset + 2] !== 0 || buffer[offset + 3] !== 0) return buffer.toString('utf8');
    const size = buffer.readUInt32BE(offset + 4);
    parts.push(buffer.subarray(offset + 8, offset + 8 + size));
    offset += 8 + size;
  }
  if (offset < buffer.length && parts.length === 0) return buffer.toString('utf8');
  return Buffer.concat(parts).toString('utf8');
}

/** The spec with its organization's placement constraint (from its owner label) first, the rest kept. */
function withOwnersPlacement(spec: ServiceSpec): ServiceSpec {
  const organizationId = spec.Labels?.[ORGANIZATION_LABEL];
  if (!organizationId || !spec.TaskTemplate) return spec;
  const placement = spec.TaskTemplate.Placement ?? {};
  return { ...spec, TaskTemplate: { ...spec.TaskTemplate, Placement: { ...placement, Constraints: withOrganizationConstraint(organizationId, placement.Constraints) } } };
}
