// Runtime health from the engine's events: a workload whose tasks exit again and again (a crash
// loop), are killed for memory, or fail their health check emits one appHealth, then nothing for
// that workload during the cooldown however it flaps, and one `recovered` once its tasks have run
// monitoringRecoverySeconds without exiting. Only Berth's containers (berth.id) are heard.
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import type { Cradle, Logger } from '@berth/core';
import { LOCAL, type MonitoringStore } from './store.ts';

const SERVICE_LABEL = 'com.docker.swarm.service.name';

export type HealthState = 'crashLoop' | 'oom' | 'unhealthy' | 'recovered';

interface Workload {
  organizationId: string;
  kind: string;
  id: string;
  appName: string;
  exits: number[];
  lastTrouble: number;
  /** When a task last started (or passed its health check after failing it). */
  lastGood: number;
  lastExitCode: number | null;
  lastContainer: string;
  alerting: boolean;
  quietUntil: number;
}

export interface EngineEvent {
  Type?: string;
  Action?: string;
  status?: string;
  id?: string;
  Actor?: { ID?: string; Attributes?: Record<string, string> };
}

export interface HealthOptions {
  crashLoopExits: number;
  crashLoopMs: number;
  recoveryMs: number;
}

export class HealthWatch {
  readonly #cradle: () => Cradle;
  readonly #store: MonitoringStore;
  readonly #options: HealthOptions;
  readonly #workloads = new Map<string, Workload>();
  readonly #streams = new Map<string, Readable>();
  readonly #stopping = new Set<string>();
  #timer?: NodeJS.Timeout;
  #offDeployments?: () => void;
  #stopped = false;
  readonly #now: () => number;

  constructor(cradle: () => Cradle, store: MonitoringStore, options: HealthOptions, now: () => number = Date.now) {
    this.#cradle = cradle;
    this.#store = store;
    this.#options = options;
    this.#now = now;
  }

  get #log(): Logger {
    return this.#cradle().logger;
  }

  /**
   * Follows the events of every server set up for monitoring and of each host that has had a
   * deployment, and of a host from its first deployment on: an instance that has deployed nothing
   * here opens no engine connection (and loads no engine client) at boot.
   */
  async start(): Promise<void> {
    this.#stopped = false;
    this.#offDeployments ??= this.#cradle().events.on('deploymentFinished', ({ deployment }) => void this.follow(deployment.serverId ?? LOCAL));
    // A server removed since its deployments is not followed (it would be retried every 30 s for ever).
    const servers = this.#cradle().servers;
    const deployed = [];
    for (const key of await this.#store.deployedHosts()) if (key === LOCAL || (await servers.organizationOf(key))) deployed.push(key);
    for (const key of new Set([...(await this.#store.settings()).keys(), ...deployed])) await this.follow(key);
    if (this.#stopped) return;
    this.#timer = setInterval(() => void this.checkRecovered(), 1000);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    this.#offDeployments?.();
    this.#offDeployments = undefined;
    clearInterval(this.#timer);
    for (const s of this.#streams.values()) s.destroy();
    this.#streams.clear();
  }

  /** Starts following a host's engine events (again after a dropped stream, 5 s later). */
  async follow(hostKey: string): Promise<void> {
    if (this.#stopped || this.#streams.has(hostKey)) return;
    try {
      // As is: a swarm worker's events are read too (monitoring prepares nothing on an engine).
      const docker: Docker = await this.#cradle().hosts.asIs(hostKey === LOCAL ? null : hostKey);
      // cast: getEvents answers a stream; dockerode types it loosely.
      const stream = (await docker.getEvents({ filters: { type: ['container'], event: ['die', 'oom', 'health_status', 'start', 'kill'], label: ['berth.id'] } })) as unknown as Readable;
      // Stopped while the stream was being opened (a boot refused after the start hooks ran), or
      // another call (deployments finishing at once) opened one first: it would keep its socket,
      // and the process, alive.
      if (this.#stopped || this.#streams.has(hostKey)) return void stream.destroy();
      this.#streams.set(hostKey, stream);
      let rest = '';
      stream.on('data', (chunk: Buffer) => {
        rest += chunk.toString('utf8');
        const lines = rest.split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines)
          if (line.trim()) void this.observe(hostKey, docker, JSON.parse(line) as EngineEvent).catch(e => this.#log.warn({ err: e }, 'monitoring: an engine event was not handled'));
      });
      const again = () => {
        if (this.#streams.get(hostKey) !== stream) return;
        this.#streams.delete(hostKey);
        if (!this.#stopped) setTimeout(() => void this.follow(hostKey), 5000).unref();
      };
      stream.on('end', again);
      stream.on('error', again);
    } catch (e) {
      this.#log.warn({ err: e, host: hostKey }, "monitoring: the engine's events cannot be followed");
      if (!this.#stopped) setTimeout(() => void this.follow(hostKey), 30_000).unref();
    }
  }

  /** One engine event of a host, as its event stream gives it (`follow` feeds them; a test replays recorded ones on its clock). */
  async observe(hostKey: string, docker: Docker, event: EngineEvent): Promise<void> {
    const attributes = event.Actor?.Attributes ?? {};
    const id = attributes['berth.id'];
    const organizationId = attributes['berth.organization'];
    if (!id || !organizationId) return;
    const key = `${hostKey}/${id}`;
    const now = this.#now();
    const w: Workload = this.#workloads.get(key) ?? {
      organizationId,
      kind: attributes['berth.kind'] ?? '',
      id,
      appName: attributes[SERVICE_LABEL] ?? attributes.name ?? id,
      exits: [],
      lastTrouble: 0,
      lastGood: 0,
      lastExitCode: null,
      lastContainer: '',
      alerting: false,
      quietUntil: 0,
    };
    this.#workloads.set(key, w);
    const action = event.Action ?? event.status ?? '';
    const container = event.Actor?.ID ?? event.id ?? '';
    let trouble: HealthState | null = null;
    if (action === 'start' || action === 'health_status: healthy') {
      w.lastGood = now;
    } else if (action === 'kill') {
      // Stopped on purpose (a redeploy, a scale-down, a removal): its exit is no trouble.
      this.#stopping.add(container);
      return;
    } else if (action === 'die' && this.#stopping.delete(container)) {
      return;
    } else if (action === 'die') {
      w.exits = [...w.exits.filter(t => now - t < this.#options.crashLoopMs), now];
      w.lastExitCode = Number(attributes.exitCode ?? NaN);
      w.lastContainer = container;
      w.lastTrouble = now;
      if (w.exits.length >= this.#options.crashLoopExits) trouble = 'crashLoop';
    } else if (action === 'oom') {
      w.lastContainer = container;
      w.lastTrouble = now;
      trouble = 'oom';
    } else if (action.startsWith('health_status') && action.includes('unhealthy')) {
      w.lastContainer = container;
      w.lastTrouble = now;
      trouble = 'unhealthy';
    }
    if (!trouble || w.alerting || now < w.quietUntil) return;
    w.alerting = true;
    w.quietUntil = now + (await this.#cooldownMs(hostKey));
    const logs = await this.#logs(docker, container);
    const code = w.lastExitCode === null || Number.isNaN(w.lastExitCode) ? '' : ` (last exit code ${w.lastExitCode})`;
    const what = {
      crashLoop: `its tasks exited ${w.exits.length} times within ${this.#options.crashLoopMs / 1000} s`,
      oom: 'a task was killed for memory (OOM)',
      unhealthy: 'a task failed its health check',
    }[trouble];
    await this.#emit(w, trouble, `${w.appName}: ${what}${code}${logs ? `\nLast log lines:\n${logs}` : ''}`);
  }

  /** Emits `recovered` for each workload in alert whose tasks have run recoveryMs without trouble (every second, on the clock). */
  async checkRecovered(): Promise<void> {
    const now = this.#now();
    for (const w of this.#workloads.values()) {
      // Recovered: a task started after the last trouble and has run since without any.
      if (!w.alerting || w.lastGood <= w.lastTrouble || now - w.lastGood < this.#options.recoveryMs) continue;
      w.alerting = false;
      w.exits = [];
      await this.#emit(w, 'recovered', `${w.appName}: its tasks have run ${Math.round(this.#options.recoveryMs / 1000)} s without exiting`).catch(e =>
        this.#log.warn({ err: e }, 'monitoring: appHealth not stored'),
      );
    }
  }

  async #emit(w: Workload, state: HealthState, message: string): Promise<void> {
    await this.#cradle().events.emitDurable('appHealth', { organizationId: w.organizationId, kind: w.kind, id: w.id, appName: w.appName, state, message, at: new Date(this.#now()).toISOString() });
  }

  async #cooldownMs(hostKey: string): Promise<number> {
    const config = (await this.#store.setting(hostKey).catch(() => null)) ?? (await this.#store.setting(LOCAL).catch(() => null));
    return (config?.server.thresholdCooldownMinutes ?? 30) * 60_000;
  }

  /** The last lines the container wrote (its two streams, the engine's frame headers removed). */
  async #logs(docker: Docker, container: string): Promise<string> {
    if (!container) return '';
    try {
      // cast: without follow, dockerode answers the bytes, not a stream.
      const raw = (await docker.getContainer(container).logs({ stdout: true, stderr: true, tail: 10, follow: false })) as unknown as Buffer;
      const parts: string[] = [];
      for (let i = 0; i + 8 <= raw.length;) {
        const size = raw.readUInt32BE(i + 4);
        parts.push(raw.subarray(i + 8, i + 8 + size).toString('utf8'));
        i += 8 + size;
      }
      return parts.join('').trim().slice(-2000);
    } catch {
      return '';
    }
  }
}
