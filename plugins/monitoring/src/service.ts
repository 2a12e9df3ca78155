// The monitoring operations: setting a host up (its metricsConfig), reading its figures in the
// peer agent's shapes, and dropping them. getServerMetrics and getContainerMetrics keep the peer's
// input: `url` is only a name for one of the caller's hosts (the address the peer's clients build),
// it is never fetched; `token` must be that host's metricsConfig.server.token.
import { createHash, timingSafeEqual } from 'node:crypto';
import { badRequest, forbidden, unauthorized, type Cradle, type EntityManager } from '@berth/core';
import { isOwnReceiver, type Collector } from './collector.ts';
import type { HealthWatch } from './health.ts';
import type { ContainerMetric, MetricsConfig, MetricsConfigInput, ServerMetric } from './schemas.ts';
import { appMonitoring } from './app-monitoring.ts';
import { LOCAL, type MonitoringStore } from './store.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const two = (n: number) => n.toFixed(2);
const round = (n: number) => Math.round(n * 100) / 100;
const LOCAL_NAMES = ['localhost', '127.0.0.1', '[::1]'];

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** The stored form: the peer's members (its `type`), Berth's optional ones kept when given. */
export function storedConfig(input: MetricsConfigInput, type: 'Dokploy' | 'Remote'): MetricsConfig {
  const s = input.server;
  return {
    server: {
      type,
      refreshRate: s.refreshRate,
      port: s.port,
      token: s.token,
      urlCallback: s.urlCallback,
      retentionDays: s.retentionDays,
      cronJob: s.cronJob,
      thresholds: { cpu: s.thresholds.cpu, memory: s.thresholds.memory, ...(s.thresholds.disk !== undefined ? { disk: s.thresholds.disk } : {}) },
      ...(s.thresholdSamples !== undefined ? { thresholdSamples: s.thresholdSamples } : {}),
      ...(s.thresholdCooldownMinutes !== undefined ? { thresholdCooldownMinutes: s.thresholdCooldownMinutes } : {}),
    },
    containers: { refreshRate: input.containers.refreshRate, services: { include: input.containers.services.include ?? [], exclude: input.containers.services.exclude ?? [] } },
  };
}

/** This machine's metricsConfig before any is stored: the peer's defaults (no token: nothing is sampled). */
const PEER_DEFAULT_CONFIG: MetricsConfig = {
  server: { type: 'Dokploy', refreshRate: 60, port: 4500, token: '', urlCallback: '', retentionDays: 2, cronJob: '', thresholds: { cpu: 0, memory: 0 } },
  containers: { refreshRate: 60, services: { include: [], exclude: [] } },
};

export class MonitoringService {
  readonly #cradle: () => Cradle;
  readonly #store: MonitoringStore;
  readonly #collector: Collector;
  readonly #health: HealthWatch;

  constructor(cradle: () => Cradle, store: MonitoringStore, collector: Collector, health: HealthWatch) {
    this.#cradle = cradle;
    this.#store = store;
    this.#collector = collector;
    this.#health = health;
  }

  #serverIp(): string | null {
    return (this.#cradle().config as { serverIp?: string | null }).serverIp ?? null;
  }

  /** The urlCallback must point where the organization may connect (Berth's own receiver is never posted to). */
  async #checkCallback(input: MetricsConfigInput, organizationId: string): Promise<void> {
    const callback = input.server.urlCallback;
    if (!callback || isOwnReceiver(callback)) return;
    await this.#cradle().outbound.checkSaved(callback, { field: 'metricsConfig.server.urlCallback', organizationId });
  }

  /** This machine's monitoring (its operators': the transport checks the caller). */
  async setupLocal(input: MetricsConfigInput, organizationId: string, em: EntityManager) {
    await this.#checkCallback(input, organizationId);
    const metricsConfig = storedConfig(input, 'Dokploy');
    await this.#store.saveSetting(LOCAL, metricsConfig, em);
    await this.#swarmNodes(LOCAL, storedConfig(input, 'Remote'), organizationId, em);
    await this.#collector.reload();
    return { serverIp: this.#serverIp(), metricsConfig };
  }

  async setupServer(serverId: string, input: MetricsConfigInput, organizationId: string, em: EntityManager) {
    await this.#checkCallback(input, organizationId);
    const metricsConfig = storedConfig(input, 'Remote');
    const view = await this.#cradle().servers.setMetricsConfig(serverId, organizationId, metricsConfig, em);
    await this.#store.saveSetting(serverId, metricsConfig, em);
    await this.#swarmNodes(serverId, metricsConfig, organizationId, em);
    await this.#collector.reload();
    void this.#health.follow(serverId);
    return view;
  }

  /**
   * A swarm manager set up brings its nodes along: each other server of the organization whose
   * engine is a node of the manager's swarm, and is not set up on its own, is set up with the
   * manager's metricsConfig (the same port and token: its figures are read at its own address) and
   * sampled over its own connection. A node set up on its own keeps its settings; a server that does
   * not answer within 5 s is left out (set it up on its own). Nodes joined later are set up by
   * setting the manager up again.
   */
  async #swarmNodes(managerKey: string, metricsConfig: MetricsConfig, organizationId: string, em: EntityManager): Promise<void> {
    const cradle = this.#cradle();
    const within = <T>(p: Promise<T>): Promise<T | null> => Promise.race([p.catch(() => null), new Promise<null>(r => setTimeout(() => r(null), 5000).unref())]);
    // As is: a worker's engine is read, not prepared (a worker is no deploy target of its own).
    const engineOf = (key: string) => cradle.hosts.asIs(key === LOCAL ? null : key);
    const manager = await within(engineOf(managerKey));
    // cast: dockerode's info is untyped; the swarm member is read for its cluster (managers only).
    const info = manager && ((await within(manager.info())) as { Swarm?: { Cluster?: { ID?: string } } } | null);
    if (!manager || !info?.Swarm?.Cluster?.ID) return;
    const nodes = new Set(((await within(manager.listNodes())) ?? []).map(n => n.ID));
    const settings = await this.#store.settings(em);
    const candidates = (await cradle.servers.all(organizationId, em)).map(s => s.serverId).filter(id => id !== managerKey && !settings.has(id));
    const joined = await Promise.all(
      candidates.map(async id => {
        const engine = await within(engineOf(id));
        // cast: as above, the node id of the server's engine.
        const node = engine && ((await within(engine.info())) as { Swarm?: { NodeID?: string } } | null);
        return node?.Swarm?.NodeID && nodes.has(node.Swarm.NodeID) ? id : null;
      }),
    );
    for (const id of joined) {
      if (!id) continue;
      await cradle.servers.setMetricsConfig(id, organizationId, metricsConfig, em);
      await this.#store.saveSetting(id, metricsConfig, em);
      void this.#health.follow(id);
      cradle.logger.info({ serverId: id, manager: managerKey }, "monitoring: a node of the manager's swarm set up with its settings");
    }
  }

  /**
   * The host `url` names among the caller's: a server of the organization at that address and
   * metrics port, or this machine (localhost, 127.0.0.1 or serverIp) when it is set up and the caller is the instance owner. Anything
   * else, another organization's server included, is the same 400.
   */
  async #resolve(url: string, token: string, path: 'metrics' | 'base', organizationId: string, instanceOwner: boolean, em: EntityManager): Promise<{ key: string; config: MetricsConfig }> {
    const refused = () =>
      badRequest("url names none of your servers' monitoring addresses (http://<ipAddress>:<metricsConfig.server.port>/metrics)", [
        { path: ['url'], message: 'not a monitoring address of your servers' },
      ]);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw badRequest('url is not a URL', [{ path: ['url'], message: 'not a URL' }]);
    }
    const pathname = parsed.pathname.replace(/\/+$/, '');
    if (!/^https?:$/.test(parsed.protocol) || (path === 'metrics' ? pathname !== '/metrics' : pathname !== '' && pathname !== '/metrics') || parsed.username || parsed.password) throw refused();
    const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
    const hostname = parsed.hostname;
    const settings = await this.#store.settings(em);
    let found: { key: string; config: MetricsConfig } | null = null;
    for (const [key, config] of settings) {
      if (config.server.port !== port) continue;
      if (key === LOCAL) {
        if (instanceOwner && (LOCAL_NAMES.includes(hostname) || hostname === this.#serverIp())) found = { key, config };
        continue;
      }
      const server = await this.#cradle()
        .servers.owned(key, organizationId, em)
        .catch(() => null);
      if (server && server.ipAddress.toLowerCase() === hostname.toLowerCase()) found = { key, config };
    }
    if (!found) throw refused();
    const expected = found.config.server.token;
    if (!expected || !timingSafeEqual(digest(token), digest(expected))) throw unauthorized("token is not this server's monitoring token");
    return found;
  }

  async serverMetrics(input: { url: string; token: string; dataPoints: string }, organizationId: string, instanceOwner: boolean, em: EntityManager): Promise<ServerMetric[]> {
    const { key } = await this.#resolve(input.url, input.token, 'metrics', organizationId, instanceOwner, em);
    const limit = input.dataPoints === 'all' ? null : Math.max(1, Number(input.dataPoints));
    const [info, samples] = await Promise.all([this.#store.info(key, em), this.#store.hostSamples(key, limit, em)]);
    const i = info ?? { cpuModel: '', cpuCores: 0, cpuPhysicalCores: 0, cpuSpeed: 0, os: '', distro: '', kernel: '', arch: '' };
    return samples.map(s => ({
      cpu: two(s.cpu),
      cpuModel: i.cpuModel,
      cpuCores: i.cpuCores,
      cpuPhysicalCores: i.cpuPhysicalCores,
      cpuSpeed: i.cpuSpeed,
      os: i.os,
      distro: i.distro,
      kernel: i.kernel,
      arch: i.arch,
      memUsed: two(s.memTotal ? (s.memUsed / s.memTotal) * 100 : 0),
      memUsedGB: two(s.memUsed / GiB),
      memTotal: two(s.memTotal / GiB),
      uptime: s.uptime,
      diskUsed: two(s.diskTotal ? (s.diskUsed / s.diskTotal) * 100 : 0),
      totalDisk: two(s.diskTotal / GiB),
      networkIn: two(s.netIn / MiB),
      networkOut: two(s.netOut / MiB),
      timestamp: s.at.toISOString(),
    }));
  }

  /** application.readAppMonitoring: the latest figures of the organization's workload named appName ("dokploy": this machine's, for operators). */
  appMonitoring(appName: string, organizationId: string, operator: boolean, em: EntityManager) {
    return appMonitoring(this.#store, this.#cradle(), appName, organizationId, operator, em);
  }

  async containerMetrics(input: { url: string; token: string; appName: string; dataPoints: string }, organizationId: string, instanceOwner: boolean, em: EntityManager): Promise<ContainerMetric[]> {
    if (!input.appName) throw badRequest('appName: select an application to monitor', [{ path: ['appName'], message: 'required' }]);
    const { key } = await this.#resolve(input.url, input.token, 'base', organizationId, instanceOwner, em);
    const limit = input.dataPoints === 'all' ? null : Math.max(1, Number(input.dataPoints));
    const samples = await this.#store.containerSamples(key, input.appName, limit, em);
    return samples.map(s => ({
      timestamp: s.at.toISOString(),
      CPU: round(s.cpu),
      Memory: { percentage: round(s.memLimit ? (s.memUsed / s.memLimit) * 100 : 0), used: round(s.memUsed / MiB), total: round(s.memLimit / MiB), usedUnit: 'MB', totalUnit: 'MB' },
      Network: { input: round(s.netIn / MiB), output: round(s.netOut / MiB), inputUnit: 'MB', outputUnit: 'MB' },
      BlockIO: { read: round(s.blkRead / MiB), write: round(s.blkWrite / MiB), readUnit: 'MB', writeUnit: 'MB' },
      Container: s.containerId,
      ID: s.containerId,
      Name: s.appName,
    }));
  }

  /** The monitored hosts the caller may read: the organization's servers, and this machine for the instance owner. */
  async hostKeys(organizationId: string, owner: boolean, em: EntityManager): Promise<string[]> {
    const keys: string[] = [];
    for (const key of (await this.#store.settings(em)).keys()) {
      if (key === LOCAL) {
        if (owner) keys.push(key);
      } else if (
        await this.#cradle()
          .servers.owned(key, organizationId, em)
          .then(() => true)
          .catch(() => false)
      )
        keys.push(key);
    }
    return keys;
  }

  /**
   * user.getMetricsToken: this machine's address and metricsConfig (the peer's defaults until
   * admin.setupMonitoring stores one); its token only for the instance's operators, whose figures they are.
   */
  async metricsToken(operator: boolean, em: EntityManager) {
    const { server, containers } = (await this.#store.setting(LOCAL, em)) ?? PEER_DEFAULT_CONFIG;
    return {
      serverIp: this.#serverIp(),
      enabledFeatures: false,
      metricsConfig: {
        server: { ...server, token: operator ? server.token : '' },
        containers: { refreshRate: containers.refreshRate, services: { include: containers.services.include ?? [], exclude: containers.services.exclude ?? [] } },
      },
    };
  }

  /** Drops the stored samples of the organization's servers (and this machine's, for the instance owner). */
  async clean(organizationId: string, owner: boolean, em: EntityManager): Promise<boolean> {
    await this.#store.clean(await this.hostKeys(organizationId, owner, em), em);
    return true;
  }
}

/** The monitoring token of every server set up here (this machine's has no organization and is left out). */
export async function monitoredServerTokens(cradle: Cradle, store: MonitoringStore, em: EntityManager) {
  const out: { serverId: string; organizationId: string; serverName: string; token: string }[] = [];
  for (const [key, config] of await store.settings(em)) {
    if (key === LOCAL || !config.server.token) continue;
    const organizationId = await cradle.servers.organizationOf(key);
    const server = organizationId ? await cradle.servers.owned(key, organizationId, em).catch(() => null) : null;
    if (server) out.push({ serverId: key, organizationId: server.organizationId, serverName: server.name, token: config.server.token });
  }
  return out;
}
