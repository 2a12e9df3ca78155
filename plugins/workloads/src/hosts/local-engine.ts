// The local Docker engine (DOCKER_HOST or the default socket). On first use it makes sure
// the engine is a swarm manager and that the platform network exists and is Berth's; engine errors are
// converted to domain errors here, at the boundary.
import type Docker from 'dockerode';
import type { ContainerHosts } from '../container-hosts.ts';
import { ensurePlatformNetwork, recordedPlatformNetwork, recordPlatformNetwork, refuseWhileAttached, type WorkloadExists } from './platform-network.ts';
import { BerthError, type EntityManager, type Logger, conflict, notFound } from '@berth/core';

interface EngineError { statusCode?: number; json?: { message?: string }; reason?: string; message?: string; code?: string }

export class LocalContainerHosts implements ContainerHosts {
  readonly #log: Logger;
  readonly #advertiseAddr: string;
  readonly #dataDir: string;
  readonly platformNetwork: string;
  #ready?: Promise<Docker>;
  readonly #afterReady: ((docker: Docker) => Promise<void>)[] = [];

  constructor({ logger, config }: { logger: Logger; config: { swarmAdvertiseAddr: string; platformNetwork: string; dataDir: string } }) {
    this.#log = logger;
    this.#advertiseAddr = config.swarmAdvertiseAddr;
    this.#dataDir = config.dataDir;
    this.platformNetwork = config.platformNetwork;
  }

  /**
   * At boot: a platformNetwork other than the one this Berth last used is checked against the
   * engine now (refused while this instance's workloads are on the former network, or when the new
   * one is not Berth's). An unchanged key leaves the engine alone until first use.
   */
  async checkNetworkAtBoot(exists: WorkloadExists, em: EntityManager): Promise<void> {
    const former = recordedPlatformNetwork(this.#dataDir);
    if (former === this.platformNetwork) return;
    const { default: Dockerode } = await import('dockerode');
    await refuseWhileAttached({ docker: new Dockerode(), call: (what, fn) => this.call(what, fn), former, configured: this.platformNetwork, exists, em });
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

  /** Runs once, in the background, when the engine is first reached (not at boot: a control plane that deploys nothing never loads the Docker client). */
  afterReady(task: (docker: Docker) => Promise<void>): void {
    this.#afterReady.push(task);
  }

  async #prepare(): Promise<Docker> {
    // Loaded on first use: a control plane that deploys nothing yet should not pay for it.
    const { default: Dockerode } = await import('dockerode');
    const docker = new Dockerode(); // honours DOCKER_HOST, else /var/run/docker.sock
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

  async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw this.#convert(what, e);
    }
  }

  #convert(what: string, e: unknown): BerthError {
    if (e instanceof BerthError) return e;
    const err = e as EngineError;
    const detail = err.json?.message ?? err.reason ?? err.message ?? String(e);
    if (err.statusCode === 404) return notFound(`Docker: cannot ${what}: ${detail}`);
    if (err.statusCode === 409) return conflict(`Docker: cannot ${what}: ${detail}`);
    this.#log.error({ err: { statusCode: err.statusCode, code: err.code, message: detail } }, `Docker: cannot ${what}`);
    return new BerthError('INTERNAL_SERVER_ERROR', `Docker: cannot ${what}`);
  }
}
