// The collector: no agent. Each host set up for monitoring (admin.setupMonitoring for this
// machine, server.setupMonitoring for a server) is read over the connection hosts.of gives
// (/proc and df run there), its containers through its engine's stats, every refreshRate seconds.
// CPU is measured over the whole interval between two samples. Samples are stored and checked
// against the thresholds (one alert, a cooldown, one "back to normal"); at metricsConfig.cronJob,
// those past retentionDays are dropped, those older than a day folded into 5-minute rows and those
// older than a week into hourly ones.
import { CronExpressionParser } from 'cron-parser';
import type Docker from 'dockerode';
import type { Cradle, Logger } from '@berth/core';
import { containerCpuPercent, containerReading, cpuPercent, cpuTimes, hostInfo, interfaces, memory, mounts, type ContainerReading, type CpuTimes, type EngineStats } from './readings.ts';
import type { MetricsConfig } from './schemas.ts';
import { LOCAL, SPANS, type ContainerSample, type MonitoringStore } from './store.ts';
import { ThresholdWatch } from './thresholds.ts';

/** Berth's own receiver of the peer's alerts (notification.receiveNotification): never posted to, so never checked. */
export const isOwnReceiver = (url: string) => {
  try {
    return /notification\.receiveNotification\/?$/.test(new URL(url).pathname);
  } catch {
    return false;
  }
};

const SERVICE_LABEL = 'com.docker.swarm.service.name';
const ID_LABEL = 'berth.id';
/** Engine stats calls in flight at once per host. */
const STATS_AT_ONCE = 8;
/** Samples older than this are folded into DOWNSAMPLE_SECONDS rows. */
export const FULL_RESOLUTION_MS = 86_400_000;
export const DOWNSAMPLE_SECONDS = SPANS[1];
/** Rows older than this are folded into HOURLY_SECONDS rows (until retentionDays). */
export const FIVE_MINUTE_MS = 7 * 86_400_000;
export const HOURLY_SECONDS = SPANS[2];

/** The start of the next hour (UTC) after `now`. */
const nextHour = (now: number): number => (Math.floor(now / 3_600_000) + 1) * 3_600_000;

/** The next time of a cron expression after `now` (UTC); an hour on for one that does not parse. */
export function nextRun(cron: string, now: number): number {
  try {
    return CronExpressionParser.parse(cron, { currentDate: new Date(now), tz: 'UTC' })
      .next()
      .getTime();
  } catch {
    return now + 3_600_000;
  }
}

interface Target {
  config: MetricsConfig;
  nextHost: number;
  nextContainers: number;
  nextMaintenance: number;
  /** The next hour's start: the folds run every hour, whatever the cronJob, so raw rows never pile up for a day. */
  nextFold: number;
  cpu?: CpuTimes;
  containers: Map<string, ContainerReading>;
  watches: { cpu: ThresholdWatch; memory: ThresholdWatch; disk: ThresholdWatch };
  infoSaved: boolean;
  /** The engine's data-root on the host (its filesystem is sampled even when df's list folds it into another mount); null when the engine does not answer. */
  dataRoot?: string | null;
}

export class Collector {
  readonly #cradle: () => Cradle;
  readonly #store: MonitoringStore;
  readonly #targets = new Map<string, Target>();
  readonly #busy = new Set<string>();
  #timer?: NodeJS.Timeout;
  #stopped = false;
  readonly #now: () => number;

  constructor(cradle: () => Cradle, store: MonitoringStore, now: () => number = Date.now) {
    this.#cradle = cradle;
    this.#store = store;
    this.#now = now;
  }

  get #log(): Logger {
    return this.#cradle().logger;
  }

  async start(): Promise<void> {
    this.#stopped = false;
    await this.reload();
    if (this.#stopped) return; // stopped while the settings were read
    this.#timer = setInterval(() => this.tick(), 500);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Reads the hosts' settings again (after a setupMonitoring). */
  async reload(): Promise<void> {
    const settings = await this.#store.settings();
    for (const key of this.#targets.keys()) if (!settings.has(key)) this.#targets.delete(key);
    for (const [key, config] of settings) {
      const target = this.#targets.get(key);
      if (target) {
        if (target.config.server.cronJob !== config.server.cronJob) target.nextMaintenance = nextRun(config.server.cronJob, this.#now());
        target.config = config;
      } else
        this.#targets.set(key, {
          config,
          nextHost: 0,
          nextContainers: 0,
          nextMaintenance: nextRun(config.server.cronJob, this.#now()),
          nextFold: nextHour(this.#now()),
          containers: new Map(),
          watches: { cpu: new ThresholdWatch(), memory: new ThresholdWatch(), disk: new ThresholdWatch() },
          infoSaved: false,
        });
    }
  }

  tick(): void {
    const now = this.#now();
    for (const [key, target] of this.#targets) {
      if (this.#busy.has(key)) continue;
      const host = now >= target.nextHost;
      const containers = now >= target.nextContainers;
      const maintenance = now >= target.nextMaintenance;
      const fold = now >= target.nextFold;
      if (!host && !containers && !maintenance && !fold) continue;
      this.#busy.add(key);
      void (async () => {
        try {
          if (host) {
            target.nextHost = now + target.config.server.refreshRate * 1000;
            await this.sampleHost(key, target);
          }
          if (containers) {
            target.nextContainers = now + target.config.containers.refreshRate * 1000;
            await this.sampleContainers(key, target);
          }
          if (maintenance) {
            target.nextMaintenance = nextRun(target.config.server.cronJob, now);
            target.nextFold = nextHour(now);
            await this.maintain(key);
          } else if (fold) {
            target.nextFold = nextHour(now);
            await this.fold(key);
          }
        } catch (e) {
          this.#log.warn({ err: e, host: key }, 'monitoring: a sample failed');
        } finally {
          this.#busy.delete(key);
        }
      })();
    }
  }

  /** Samples one host now, its figures then its containers, and resolves when both are stored (tick does this on the clock). */
  async collect(key: string): Promise<void> {
    const target = this.#targets.get(key);
    if (!target) throw new Error(`monitoring: ${key} is not set up`);
    await this.sampleHost(key, target);
    await this.sampleContainers(key, target);
  }

  /**
   * The cronJob's work for one host: samples older than retentionDays dropped, then those older
   * than a day (at a bucket's edge) folded into 5-minute rows, and rows older than a week into
   * hourly ones. Answers the rows folded and written.
   */
  async maintain(key: string): Promise<{ folded: number; written: number }> {
    const target = this.#targets.get(key);
    if (!target) throw new Error(`monitoring: ${key} is not set up`);
    await this.#store.prune(key, new Date(this.#now() - target.config.server.retentionDays * 86_400_000));
    return this.fold(key);
  }

  /**
   * The folds alone, run every hour: samples older than a day (at a bucket's edge) into 5-minute
   * rows, and rows older than a week into hourly ones. An hour's fold rewrites an hour of rows, so
   * the space it frees is reused by the next hour's samples instead of a day's raw rows standing
   * beside their fold until a daily cronJob.
   */
  async fold(key: string): Promise<{ folded: number; written: number }> {
    const now = this.#now();
    const edge = (age: number, seconds: number) => new Date(Math.floor((now - age) / (seconds * 1000)) * seconds * 1000);
    const fine = await this.#store.downsample(key, edge(FULL_RESOLUTION_MS, DOWNSAMPLE_SECONDS), DOWNSAMPLE_SECONDS);
    const coarse = await this.#store.downsample(key, edge(FIVE_MINUTE_MS, HOURLY_SECONDS), HOURLY_SECONDS);
    return { folded: fine.folded + coarse.folded, written: fine.written + coarse.written };
  }

  /** The host's engine as is, only read (a swarm worker's too: monitoring prepares nothing on it). */
  #engine(key: string): Promise<Docker> {
    return this.#cradle().hosts.asIs(key === LOCAL ? null : key);
  }

  async #host(key: string) {
    return this.#cradle().hosts.of(key === LOCAL ? null : key);
  }

  async #read(run: (argv: string[]) => Promise<{ stdout: string; code: number | null }>, argv: string[]): Promise<string> {
    const r = await run(argv);
    if (r.code !== 0) throw new Error(`${argv.join(' ')} exited with ${r.code}`);
    return r.stdout;
  }

  /** One host sample; the first only primes the CPU counters (a percentage needs two readings). */
  async sampleHost(key: string, target: Target): Promise<void> {
    const host = await this.#host(key);
    const run = (argv: string[]) => host.run(argv) as Promise<{ stdout: string; code: number | null }>;
    if (!target.infoSaved) {
      const [cpuinfo, osRelease, kernel, arch] = await Promise.all([
        this.#read(run, ['cat', '/proc/cpuinfo']),
        this.#read(run, ['cat', '/etc/os-release']).catch(() => ''),
        this.#read(run, ['cat', '/proc/sys/kernel/osrelease']),
        this.#read(run, ['uname', '-m']),
      ]);
      await this.#store.saveInfo(key, hostInfo(cpuinfo, osRelease, kernel, arch));
      target.infoSaved = true;
    }
    if (target.dataRoot === undefined) {
      const info = (await (await this.#engine(key)).info().catch(() => null)) as { DockerRootDir?: string } | null;
      target.dataRoot = info?.DockerRootDir && info.DockerRootDir.startsWith('/') ? info.DockerRootDir : null;
    }
    const [stat, meminfo, netDev, uptime, df, dataRootDf] = await Promise.all([
      this.#read(run, ['cat', '/proc/stat']),
      this.#read(run, ['cat', '/proc/meminfo']),
      this.#read(run, ['cat', '/proc/net/dev']),
      this.#read(run, ['cat', '/proc/uptime']),
      this.#read(run, ['df', '-P', '-B1', '-x', 'tmpfs', '-x', 'devtmpfs', '-x', 'overlay']).catch(() => ''),
      target.dataRoot ? this.#read(run, ['df', '-P', '-B1', '--', target.dataRoot]).catch(() => '') : '',
    ]);
    const times = cpuTimes(stat);
    const cpu = cpuPercent(target.cpu, times);
    target.cpu = times;
    if (cpu === null) return;
    const mem = memory(meminfo);
    const devices = interfaces(netDev);
    const disks = mounts(df);
    // df lists a filesystem once; the mount holding the engine's data-root is added when it was folded away.
    for (const m of mounts(dataRootDf)) if (!disks.some(d => d.mount === m.mount)) disks.push(m);
    const root = disks.find(m => m.mount === '/') ?? disks[0];
    const external = devices.filter(d => d.device !== 'lo');
    const sample = {
      at: new Date(this.#now()),
      cpu,
      memUsed: mem.usedBytes,
      memTotal: mem.totalBytes,
      diskUsed: root?.usedBytes ?? 0,
      diskTotal: root?.totalBytes ?? 0,
      netIn: external.reduce((a, d) => a + d.receiveBytes, 0),
      netOut: external.reduce((a, d) => a + d.transmitBytes, 0),
      uptime: Number(uptime.split(/\s+/)[0]) || 0,
      mounts: disks,
      devices,
    };
    await this.#store.addHostSample(key, sample);
    await this.#thresholds(key, target, { CPU: cpu, Memory: (mem.usedBytes / mem.totalBytes) * 100, Disk: root ? (root.usedBytes / root.totalBytes) * 100 : 0 });
  }

  async #thresholds(key: string, target: Target, values: Record<'CPU' | 'Memory' | 'Disk', number>): Promise<void> {
    const s = target.config.server;
    const base = { samples: s.thresholdSamples ?? 3, cooldownMs: (s.thresholdCooldownMinutes ?? 30) * 60_000 };
    const checks = [
      ['CPU', target.watches.cpu, s.thresholds.cpu],
      ['Memory', target.watches.memory, s.thresholds.memory],
      ['Disk', target.watches.disk, s.thresholds.disk ?? 0],
    ] as const;
    for (const [type, watch, threshold] of checks) {
      const value = Math.round(values[type] * 100) / 100;
      const verdict = watch.observe(value, { ...base, threshold }, this.#now());
      if (verdict) await this.#alert(key, target, type, verdict, value, threshold);
    }
  }

  async #alert(key: string, target: Target, type: 'CPU' | 'Memory' | 'Disk', verdict: 'alert' | 'normal', value: number, threshold: number): Promise<void> {
    const cradle = this.#cradle();
    // cast: the server directory takes the core's EntityManager type; a fork of the ORM's is one.
    const server = key === LOCAL ? null : await cradle.servers.owned(key, (await cradle.servers.organizationOf(key)) ?? '', cradle.orm.em.fork() as never).catch(() => null);
    if (key !== LOCAL && !server) return;
    const message =
      verdict === 'alert'
        ? `${type} at ${value}% is above ${threshold}% (${target.config.server.thresholdSamples ?? 3} samples in a row)`
        : `${type} back to normal: ${value}% (threshold ${threshold}%)`;
    const at = new Date(this.#now()).toISOString();
    await cradle.events.emitDurable('serverThreshold', {
      organizationId: server?.organizationId ?? null,
      serverId: server?.serverId ?? null,
      serverName: server?.name ?? 'Berth',
      type,
      value,
      threshold,
      message,
      state: verdict,
      at,
    });
    const callback = target.config.server.urlCallback;
    if (verdict === 'alert' && callback && !isOwnReceiver(callback)) {
      // The peer's agent body (it sends alerts only), so a receiver written for it reads Berth's unchanged.
      const body = { ServerType: key === LOCAL ? 'Dokploy' : 'Remote', Type: type, Value: value, Threshold: threshold, Message: message, Timestamp: at, Token: target.config.server.token };
      // The address checked again now, for the server's organization (this machine's: the instance operators'): DNS may have changed.
      const organizationId = server?.organizationId ?? (await cradle.outbound.instanceOrganizationId());
      await cradle.outbound
        .fetch({ field: 'metricsConfig.server.urlCallback', organizationId })(callback, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        })
        .catch(e => this.#log.warn({ err: e, host: key }, 'monitoring: the urlCallback was refused or did not answer'));
    }
  }

  /** One sample of every Berth container on the host (replicas of one service summed under its name). */
  async sampleContainers(key: string, target: Target): Promise<void> {
    const docker: Docker = await this.#engine(key);
    const { include = [], exclude = [] } = target.config.containers.services;
    const list = await docker.listContainers({ filters: { label: [ID_LABEL], status: ['running'] } });
    const at = new Date(this.#now());
    const byApp = new Map<string, ContainerSample>();
    const seen = new Set<string>();
    const appOf = (c: (typeof list)[number]) => c.Labels[SERVICE_LABEL] ?? (c.Names[0] ?? '').replace(/^\//, '');
    const sampled = list.filter(c => (!include.length || include.includes(appOf(c))) && !exclude.includes(appOf(c)));
    // STATS_AT_ONCE at a time: the engine answers a stats call at its next collection tick (about a
    // second on this machine's Docker 20.10, one-shot or not), so one after the other 20 containers
    // took 20 s, past a 10 s refreshRate; a bound, as a remote engine's calls share one SSH connection.
    const answers: (EngineStats | null)[] = [];
    for (let from = 0; from < sampled.length; from += STATS_AT_ONCE) {
      const batch = sampled.slice(from, from + STATS_AT_ONCE).map(c =>
        // casts: dockerode's types know neither 'one-shot' nor the non-streamed answer.
        (docker.getContainer(c.Id).stats({ stream: false, 'one-shot': true } as never) as unknown as Promise<EngineStats>).catch(() => null),
      );
      answers.push(...(await Promise.all(batch)));
    }
    for (const [i, c] of sampled.entries()) {
      const appName = appOf(c);
      const stats = answers[i];
      if (!stats) continue;
      seen.add(c.Id);
      const reading = containerReading(stats);
      const cpu = containerCpuPercent(target.containers.get(c.Id), reading);
      target.containers.set(c.Id, reading);
      if (cpu === null) continue;
      const sum = byApp.get(appName) ?? { appName, containerId: c.Id, at, cpu: 0, memUsed: 0, memLimit: 0, netIn: 0, netOut: 0, blkRead: 0, blkWrite: 0 };
      sum.cpu += cpu;
      sum.memUsed += reading.memoryUsedBytes;
      sum.memLimit = Math.max(sum.memLimit, reading.memoryLimitBytes);
      sum.netIn += reading.receiveBytes;
      sum.netOut += reading.transmitBytes;
      sum.blkRead += reading.readBytes;
      sum.blkWrite += reading.writeBytes;
      byApp.set(appName, sum);
    }
    for (const id of target.containers.keys()) if (!seen.has(id)) target.containers.delete(id);
    await this.#store.addContainerSamples(key, [...byApp.values()]);
  }
}
