// What a stack is on the engine, for both compose types: its containers (docker-compose: the
// project's, by Compose's labels) or its Swarm services (stack: the namespace's). "Running" is
// checked here after the program returns; stop, start and removal work on the engine directly,
// so they need no file on disk. Every object is found by the project's labels, and every one a
// run touches must carry the record's owner label (berth.id): anything else is refused (409).
import type Docker from 'dockerode';
import { conflict } from '@berth/core';
import { ID_LABEL } from '@berth/plugin-workloads';

export type ComposeType = 'docker-compose' | 'stack';

/** The project (or stack) name on the engine: Compose v1 keeps only [-_a-z0-9] of it. */
export const projectName = (appName: string) => appName.toLowerCase().replace(/[^-_a-z0-9]/g, '');

const COMPOSE_PROJECT = 'com.docker.compose.project';
const COMPOSE_SERVICE = 'com.docker.compose.service';
const STACK_NAMESPACE = 'com.docker.stack.namespace';

export interface WaitIo {
  signal?: AbortSignal;
  log(line: string): void;
  /** How long every service must keep running before the run is done. */
  settleMs: number;
  /** Give up after this long. */
  timeoutMs?: number;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('The deployment was cancelled'));
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new Error('The deployment was cancelled'));
      },
      { once: true },
    );
  });

export class StackEngine {
  readonly #docker: Docker;
  readonly type: ComposeType;
  readonly project: string;
  readonly #owner: string;

  constructor(docker: Docker, type: ComposeType, appName: string, ownerId: string) {
    this.#docker = docker;
    this.type = type;
    this.project = projectName(appName);
    this.#owner = ownerId;
  }

  #label(): string {
    return `${this.type === 'stack' ? STACK_NAMESPACE : COMPOSE_PROJECT}=${this.project}`;
  }

  containers(all = true): Promise<Docker.ContainerInfo[]> {
    return this.#docker.listContainers({ all, filters: { label: [this.#label()] } });
  }

  services(): Promise<Docker.Service[]> {
    return this.#docker.listServices({ filters: { label: [this.#label()] } });
  }

  /** Refuses (409) a project of this name on the host that is not Berth's for the record. */
  async assertOurs(): Promise<void> {
    const found =
      this.type === 'stack'
        ? (await this.services()).map(s => ({ name: s.Spec?.Name ?? '', labels: s.Spec?.Labels ?? {} }))
        : (await this.containers()).map(c => ({ name: c.Names[0]?.replace(/^\//, '') ?? '', labels: c.Labels ?? {} }));
    const foreign = found.find(o => o.labels[ID_LABEL] !== this.#owner);
    if (foreign) throw conflict(`the ${this.type === 'stack' ? 'stack' : 'compose project'} ${this.project} on this host has ${foreign.name}, which is not Berth's for this record`);
  }

  /** Whether anything of the project exists on the engine. */
  async exists(): Promise<boolean> {
    return this.type === 'stack' ? (await this.services()).length > 0 : (await this.containers()).length > 0;
  }

  /** Waits until every named service runs (for a stack: its tasks of the version deployed since `since`) and keeps running for settleMs; rejects naming the service and the engine's reason. */
  async waitRunning(services: string[], since: Date, io: WaitIo): Promise<void> {
    const deadline = Date.now() + (io.timeoutMs ?? 300_000);
    let stableSince: number | null = null;
    for (;;) {
      const pending = this.type === 'stack' ? await this.#stackPending(services, since) : await this.#composePending(services);
      if (pending.length === 0) {
        stableSince ??= Date.now();
        if (Date.now() - stableSince >= io.settleMs) return;
      } else {
        stableSince = null;
        if (Date.now() > deadline) throw new Error(`Not running after ${Math.round((io.timeoutMs ?? 300_000) / 1000)} s: ${pending.join('; ')}`);
      }
      await sleep(250, io.signal);
    }
  }

  /**
   * After a stack's deploy failed: every service the run changed (updated since `since`, with a
   * previous spec) goes back to that spec, the ones Swarm did not roll back itself too, so the
   * stack runs its previous release as a whole rather than half of each; waits until none is still
   * rolling back. Answers the services sent back, and the new ones the release created (they have
   * nothing to go back to and stay).
   */
  async rollBack(since: Date, io: WaitIo): Promise<{ rolledBack: string[]; created: string[] }> {
    const rolledBack: string[] = [];
    const created: string[] = [];
    type Inspected = Docker.Service & { PreviousSpec?: unknown; UpdateStatus?: { State?: string } };
    for (const svc of (await this.services()) as Inspected[]) {
      const name = svc.Spec?.Name ?? svc.ID;
      if (new Date(svc.UpdatedAt ?? svc.CreatedAt ?? 0) < since) continue;
      // Swarm rolls this one back itself (its spec and previous spec swap as it starts).
      if (svc.UpdateStatus?.State?.startsWith('rollback')) {
        rolledBack.push(name);
        continue;
      }
      if (!svc.PreviousSpec) {
        created.push(name);
        continue;
      }
      // The engine's own rollback (?rollback=previous): it checks the spec sent with it (the current one), then rolls out the previous.
      await this.#docker.getService(svc.ID).update({ ...svc.Spec, _query: { version: svc.Version!.Index, rollback: 'previous' } });
      rolledBack.push(name);
    }
    const deadline = Date.now() + (io.timeoutMs ?? 300_000);
    for (;;) {
      const rolling = ((await this.services()) as Inspected[]).filter(s => rolledBack.includes(s.Spec?.Name ?? s.ID) && s.UpdateStatus?.State === 'rollback_started');
      if (!rolling.length || Date.now() > deadline) break;
      await sleep(250, io.signal);
    }
    return { rolledBack, created };
  }

  /** What is not running yet, per service; throws when a service failed. */
  async #composePending(services: string[]): Promise<string[]> {
    const containers = await this.containers();
    const pending: string[] = [];
    for (const service of services) {
      const own = containers.filter(c => c.Labels?.[COMPOSE_SERVICE] === service);
      if (!own.length) {
        pending.push(`service ${service}: no container yet`);
        continue;
      }
      for (const c of own) {
        if (c.State === 'running') continue;
        if (c.State === 'exited' || c.State === 'dead' || c.State === 'restarting') {
          const state = (await this.#docker.getContainer(c.Id).inspect()).State;
          throw new Error(
            `service ${service} is not running: its container ${c.State === 'restarting' ? 'keeps restarting' : 'stopped'} (exit code ${state.ExitCode}${state.Error ? `, ${state.Error}` : ''})`,
          );
        }
        pending.push(`service ${service}: ${c.State}`);
      }
    }
    return pending;
  }

  async #stackPending(services: string[], since: Date): Promise<string[]> {
    const all = await this.services();
    const pending: string[] = [];
    for (const service of services) {
      const name = `${this.project}_${service}`;
      const svc = all.find(s => s.Spec?.Name === name);
      if (!svc) {
        pending.push(`service ${service}: not created yet`);
        continue;
      }
      const update = (svc as { UpdateStatus?: { State?: string; Message?: string } }).UpdateStatus;
      // rollback_started too: the update failed already, and the rollback's own task would pass for the new version's.
      if (update?.State === 'rollback_started' || update?.State === 'rollback_completed' || update?.State === 'rollback_paused' || update?.State === 'paused') {
        throw new Error(
          `service ${service}: the update failed and was ${update.State === 'paused' ? 'paused' : update.State === 'rollback_started' ? 'being rolled back' : 'rolled back'} (${update.Message ?? 'no reason given'})`,
        );
      }
      const tasks = (await this.#docker.listTasks({ filters: { service: [svc.ID] } })) as { CreatedAt?: string; DesiredState?: string; Status?: { State?: string; Err?: string } }[];
      const changed = new Date(svc.UpdatedAt ?? svc.CreatedAt ?? 0) >= since;
      const current = tasks.filter(t => !changed || new Date(t.CreatedAt ?? 0) >= since);
      const failed = current.filter(t => ['failed', 'rejected'].includes(t.Status?.State ?? ''));
      if (failed.length >= 2) throw new Error(`service ${service} is not running: ${failed[0]!.Status?.Err ?? failed[0]!.Status?.State}`);
      const wanted = svc.Spec?.Mode?.Replicated ? (svc.Spec.Mode.Replicated.Replicas ?? 1) : 1;
      const running = current.filter(t => t.DesiredState === 'running' && t.Status?.State === 'running').length;
      if (running < wanted || update?.State === 'updating') pending.push(`service ${service}: ${running}/${wanted} task(s) running`);
    }
    return pending;
  }

  /** Stops the stack: containers stopped (docker-compose), or every service scaled to 0 with its replicas kept in a label (stack). */
  async stop(io: WaitIo): Promise<void> {
    if (this.type === 'docker-compose') {
      for (const c of await this.containers(false)) await this.#docker.getContainer(c.Id).stop({ t: 10 }).catch(ignoreNotModified);
      return;
    }
    for (const svc of await this.services()) {
      const spec = svc.Spec!;
      const replicas = spec.Mode?.Replicated?.Replicas;
      if (replicas === undefined || replicas === 0) continue;
      await this.#docker.getService(svc.ID).update({ ...spec, version: svc.Version!.Index, Labels: { ...spec.Labels, 'berth.replicas': String(replicas) }, Mode: { Replicated: { Replicas: 0 } } });
    }
    await this.#waitContainers(false, io);
  }

  /** Starts a stopped stack again and waits until every service runs. */
  async start(services: string[], io: WaitIo): Promise<void> {
    const since = new Date();
    if (this.type === 'docker-compose') {
      for (const c of await this.containers()) if (c.State !== 'running') await this.#docker.getContainer(c.Id).start().catch(ignoreNotModified);
    } else {
      for (const svc of await this.services()) {
        const spec = svc.Spec!;
        if (!spec.Mode?.Replicated || spec.Mode.Replicated.Replicas) continue;
        const replicas = Number(spec.Labels?.['berth.replicas'] ?? 1);
        await this.#docker.getService(svc.ID).update({ ...spec, version: svc.Version!.Index, Mode: { Replicated: { Replicas: replicas } } });
      }
    }
    await this.waitRunning(services, since, io);
  }

  /** Takes the stack off the host: containers or services, then its networks (and its volumes when asked); images stay. */
  async remove(volumes: boolean, io: WaitIo): Promise<void> {
    if (this.type === 'stack') for (const svc of await this.services()) await this.#docker.getService(svc.ID).remove().catch(ignoreMissing);
    else for (const c of await this.containers()) await this.#docker.getContainer(c.Id).remove({ force: true, v: false }).catch(ignoreMissing);
    // Swarm removes a stack's containers itself once the tasks end; volumes in use cannot go before.
    await this.#waitContainers(true, io);
    const filters = { label: [this.#label()] };
    for (const n of await this.#docker.listNetworks({ filters })) await this.#docker.getNetwork(n.Id).remove().catch(ignoreMissing);
    if (this.type === 'stack') {
      for (const c of await this.#docker.listConfigs({ filters })) await this.#docker.getConfig(c.ID).remove().catch(ignoreMissing);
      for (const s of await this.#docker.listSecrets({ filters })) await this.#docker.getSecret(s.ID).remove().catch(ignoreMissing);
    }
    if (volumes) for (const v of (await this.#docker.listVolumes({ filters })).Volumes ?? []) await this.#docker.getVolume(v.Name).remove().catch(ignoreMissing);
    // The last-good tags are Berth's own: untagged (the images go only when nothing else names them).
    for (const image of await this.#docker.listImages({ filters: { reference: [`berth/${this.project}-*:last-good`] } })) {
      for (const tag of image.RepoTags ?? []) if (tag.startsWith(`berth/${this.project}-`) && tag.endsWith(':last-good')) await this.#docker.getImage(tag).remove().catch(ignoreMissing);
    }
  }

  /** Waits until the project has no running containers (or none at all), up to a minute. */
  async #waitContainers(all: boolean, io: WaitIo): Promise<void> {
    const deadline = Date.now() + 60_000;
    while ((await this.containers(all)).length) {
      if (Date.now() > deadline) throw new Error(`the containers of ${this.project} did not go within 60 s`);
      await sleep(250, io.signal);
    }
  }

  /**
   * Tags the image every service runs now as `berth/<project>-<service>:last-good`, so a later
   * build that fails, or replaces the service's image tag, leaves the running version's image
   * tagged (and not pruned as dangling). One tag per service: the previous one moves.
   */
  async tagRunningImages(): Promise<void> {
    const label = this.type === 'stack' ? 'com.docker.swarm.service.name' : COMPOSE_SERVICE;
    for (const c of await this.containers(false)) {
      const service = c.Labels?.[label]?.replace(`${this.project}_`, '') ?? '';
      if (!/^[a-z0-9][a-z0-9_.-]*$/.test(service)) continue;
      await this.#docker.getImage(c.ImageID).tag({ repo: `berth/${this.project}-${service}`, tag: 'last-good' });
    }
  }

  /** The label filters of one service's containers (Compose's service label, or the stack's Swarm service name). */
  #serviceLabels(service: string): string[] {
    return [this.#label(), this.type === 'stack' ? `com.docker.swarm.service.name=${this.project}_${service}` : `${COMPOSE_SERVICE}=${service}`];
  }

  /** The id of a running container of the service that is the record's (owner label), or null when none runs. */
  async runningContainer(service: string): Promise<string | null> {
    const found = await this.#docker.listContainers({ filters: { label: this.#serviceLabels(service), status: ['running'] } });
    return found.find(c => c.Labels?.[ID_LABEL] === this.#owner)?.Id ?? null;
  }

  /** The named volumes mounted by a service's container (the peer's loadMountsByService). */
  async volumeMounts(service: string): Promise<Record<string, unknown>[]> {
    const [c] = await this.#docker.listContainers({ all: true, filters: { label: this.#serviceLabels(service) } });
    if (!c) return [];
    return (c.Mounts ?? []).filter(m => m.Type === 'volume' && m.Source !== '') as Record<string, unknown>[];
  }

  /** A container's log, when the container is the stack's (Compose's or Swarm's labels say so). */
  async containerLogs(containerId: string, options: { tail: number; since: string }): Promise<string | null> {
    const found = (await this.containers()).find(c => c.Id.startsWith(containerId) || c.Names.some(n => n.replace(/^\//, '') === containerId));
    if (!found) return null;
    const since = options.since === 'all' ? 0 : Math.floor(Date.now() / 1000) - toSeconds(options.since);
    const raw = (await this.#docker.getContainer(found.Id).logs({ stdout: true, stderr: true, tail: options.tail, since, follow: false })) as Buffer;
    return demux(raw);
  }
}

const toSeconds = (s: string) => Number(s.slice(0, -1)) * ({ s: 1, m: 60, h: 3600, d: 86400 }[s.slice(-1)] ?? 1);

/** The text of a multiplexed (non-tty) log stream. */
function demux(buf: Buffer): string {
  const out: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length && buf[i]! <= 2 && buf[i + 1] === 0) {
    const size = buf.readUInt32BE(i + 4);
    out.push(buf.subarray(i + 8, i + 8 + size));
    i += 8 + size;
  }
  return i === 0 ? buf.toString('utf8') : Buffer.concat(out).toString('utf8');
}

const ignoreMissing = (e: { statusCode?: number }) => {
  if (e.statusCode !== 404) throw e;
};
const ignoreNotModified = (e: { statusCode?: number }) => {
  if (e.statusCode !== 304 && e.statusCode !== 404) throw e;
};
