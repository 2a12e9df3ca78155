// The samples and settings in PostgreSQL (this plugin's tables only). A host is 'local' or a
// server's id.
import type { EntityManager } from '@berth/core';
import type { HostInfo, Interface, Mount } from './readings.ts';
import type { MetricsConfig } from './schemas.ts';

export const LOCAL = 'local';

export interface HostSample {
  at: Date;
  cpu: number;
  memUsed: number;
  memTotal: number;
  diskUsed: number;
  diskTotal: number;
  netIn: number;
  netOut: number;
  uptime: number;
  mounts: Mount[];
  devices: Interface[];
}

export interface ContainerSample {
  appName: string;
  containerId: string;
  at: Date;
  cpu: number;
  memUsed: number;
  memLimit: number;
  netIn: number;
  netOut: number;
  blkRead: number;
  blkWrite: number;
}

const num = (v: unknown) => Number(v ?? 0);

const containerSample = (r: Record<string, unknown>): ContainerSample => ({
  appName: String(r.app_name),
  containerId: String(r.container_id),
  at: new Date(r.at as string),
  cpu: num(r.cpu),
  memUsed: num(r.mem_used),
  memLimit: num(r.mem_limit),
  netIn: num(r.net_in),
  netOut: num(r.net_out),
  blkRead: num(r.blk_read),
  blkWrite: num(r.blk_write),
});

export class MonitoringStore {
  readonly #em: () => EntityManager;
  constructor(em: () => EntityManager) {
    this.#em = em;
  }

  #sql<T = Record<string, unknown>>(query: string, params: unknown[] = [], em = this.#em()): Promise<T[]> {
    return em.getConnection().execute<T[]>(query, params);
  }

  async settings(em?: EntityManager): Promise<Map<string, MetricsConfig>> {
    const rows = await this.#sql<{ host_key: string; metrics_config: MetricsConfig }>(`select host_key, metrics_config from monitoring_settings`, [], em);
    return new Map(rows.map(r => [r.host_key, r.metrics_config]));
  }

  async setting(hostKey: string, em?: EntityManager): Promise<MetricsConfig | null> {
    const [row] = await this.#sql<{ metrics_config: MetricsConfig }>(`select metrics_config from monitoring_settings where host_key = ?`, [hostKey], em);
    return row?.metrics_config ?? null;
  }

  async saveSetting(hostKey: string, config: MetricsConfig, em?: EntityManager): Promise<void> {
    await this.#sql(
      `insert into monitoring_settings (host_key, metrics_config, updated_at) values (?, ?::jsonb, now()) on conflict (host_key) do update set metrics_config = excluded.metrics_config, updated_at = now()`,
      [hostKey, JSON.stringify(config)],
      em,
    );
  }

  async saveInfo(hostKey: string, info: HostInfo): Promise<void> {
    await this.#sql(`insert into monitoring_hosts (host_key, info, updated_at) values (?, ?::jsonb, now()) on conflict (host_key) do update set info = excluded.info, updated_at = now()`, [
      hostKey,
      JSON.stringify(info),
    ]);
  }

  async info(hostKey: string, em?: EntityManager): Promise<HostInfo | null> {
    const [row] = await this.#sql<{ info: HostInfo }>(`select info from monitoring_hosts where host_key = ?`, [hostKey], em);
    return row?.info ?? null;
  }

  async addHostSample(hostKey: string, s: HostSample): Promise<void> {
    await this.#sql(
      `insert into monitoring_host_samples (host_key, at, cpu, mem_used, mem_total, disk_used, disk_total, net_in, net_out, uptime, mounts, devices) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb) on conflict do nothing`,
      [hostKey, s.at, s.cpu, s.memUsed, s.memTotal, s.diskUsed, s.diskTotal, s.netIn, s.netOut, Math.round(s.uptime), JSON.stringify(s.mounts), JSON.stringify(s.devices)],
    );
  }

  async addContainerSamples(hostKey: string, samples: ContainerSample[]): Promise<void> {
    if (!samples.length) return;
    const values = samples.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
    const params = samples.flatMap(s => [hostKey, s.appName, s.at, s.containerId, s.cpu, s.memUsed, s.memLimit, s.netIn, s.netOut, s.blkRead, s.blkWrite]);
    await this.#sql(
      `insert into monitoring_container_samples (host_key, app_name, at, container_id, cpu, mem_used, mem_limit, net_in, net_out, blk_read, blk_write) values ${values} on conflict do nothing`,
      params,
    );
  }

  /** The latest `limit` host samples (null: all), oldest first. */
  async hostSamples(hostKey: string, limit: number | null, em?: EntityManager): Promise<HostSample[]> {
    const rows = await this.#sql<Record<string, unknown>>(
      `select * from (select * from monitoring_host_samples where host_key = ? order by at desc ${limit === null ? '' : 'limit ?'}) s order by at asc`,
      limit === null ? [hostKey] : [hostKey, limit],
      em,
    );
    return rows.map(r => ({
      at: new Date(r.at as string),
      cpu: num(r.cpu),
      memUsed: num(r.mem_used),
      memTotal: num(r.mem_total),
      diskUsed: num(r.disk_used),
      diskTotal: num(r.disk_total),
      netIn: num(r.net_in),
      netOut: num(r.net_out),
      uptime: num(r.uptime),
      mounts: r.mounts as Mount[],
      devices: r.devices as Interface[],
    }));
  }

  /** The latest `limit` samples of one app on a host (null: all), oldest first. */
  async containerSamples(hostKey: string, appName: string, limit: number | null, em?: EntityManager): Promise<ContainerSample[]> {
    const rows = await this.#sql<Record<string, unknown>>(
      `select * from (select * from monitoring_container_samples where host_key = ? and app_name = ? order by at desc ${limit === null ? '' : 'limit ?'}) s order by at asc`,
      limit === null ? [hostKey, appName] : [hostKey, appName, limit],
      em,
    );
    return rows.map(containerSample);
  }

  /** The newest sample of each app on a host, of those taken since `since`. */
  async latestContainerSamples(hostKey: string, since: Date, em?: EntityManager): Promise<ContainerSample[]> {
    const rows = await this.#sql<Record<string, unknown>>(
      `select distinct on (app_name) * from monitoring_container_samples where host_key = ? and at >= ? order by app_name, at desc`,
      [hostKey, since],
      em,
    );
    return rows.map(containerSample);
  }

  /** The hosts that have had a deployment ('local' for this machine): the deployment plugin's table, none without it. */
  async deployedHosts(em?: EntityManager): Promise<string[]> {
    const rows = await this.#sql<{ host: string }>(`select distinct coalesce(server_id, ?) as host from deployments`, [LOCAL], em).catch(() => []);
    return rows.map(r => r.host);
  }

  /** An organization's deployments by status (the deployment plugin's table; none without it). */
  async deploymentsByStatus(organizationId: string, em?: EntityManager): Promise<[string, number][]> {
    const rows = await this.#sql<{ status: string; n: string }>(`select status, count(*) as n from deployments where organization_id = ? group by status order by status`, [organizationId], em).catch(
      () => [],
    );
    return rows.map(r => [r.status, Number(r.n)]);
  }

  /**
   * Folds one host's samples taken before `before` (a multiple of `bucketSeconds`) into one row per
   * `bucketSeconds` (span = bucketSeconds, `at` its start): gauges averaged (CPU, memory and disk in
   * use), sizes and the since-boot counters (network, block IO) at their maximum, the mounts and
   * interfaces of the bucket's last sample. Rows folded before are left as they are. Answers the rows
   * folded and the rows written.
   */
  async downsample(hostKey: string, before: Date, bucketSeconds: number, em?: EntityManager): Promise<{ folded: number; written: number }> {
    const bucket = `to_timestamp(floor(extract(epoch from at) / ${Number(bucketSeconds)}) * ${Number(bucketSeconds)})`;
    // One statement each: the raw rows are deleted and their folds inserted in it, so a fold at a
    // bucket's start replaces the sample that was there.
    const hosts = await this.#sql<{ n: string; w: string }>(
      `with raw as (delete from monitoring_host_samples where host_key = ? and at < ? and span = 0 returning *),
       folded as (insert into monitoring_host_samples (host_key, at, cpu, mem_used, mem_total, disk_used, disk_total, net_in, net_out, uptime, mounts, devices, span)
         select host_key, ${bucket}, avg(cpu), round(avg(mem_used)), max(mem_total), round(avg(disk_used)), max(disk_total), max(net_in), max(net_out), max(uptime),
           (array_agg(mounts order by at desc))[1], (array_agg(devices order by at desc))[1], ?::integer
         from raw group by host_key, ${bucket} returning 1)
       select (select count(*) from raw) as n, (select count(*) from folded) as w`,
      [hostKey, before, bucketSeconds],
      em,
    );
    const containers = await this.#sql<{ n: string; w: string }>(
      `with raw as (delete from monitoring_container_samples where host_key = ? and at < ? and span = 0 returning *),
       folded as (insert into monitoring_container_samples (host_key, app_name, at, container_id, cpu, mem_used, mem_limit, net_in, net_out, blk_read, blk_write, span)
         select host_key, app_name, ${bucket}, (array_agg(container_id order by at desc))[1], avg(cpu), round(avg(mem_used)), max(mem_limit), max(net_in), max(net_out), max(blk_read), max(blk_write), ?::integer
         from raw group by host_key, app_name, ${bucket} returning 1)
       select (select count(*) from raw) as n, (select count(*) from folded) as w`,
      [hostKey, before, bucketSeconds],
      em,
    );
    const total = (k: 'n' | 'w') => Number(hosts[0]?.[k] ?? 0) + Number(containers[0]?.[k] ?? 0);
    return { folded: total('n'), written: total('w') };
  }

  /** Drops samples older than `before` of one host. */
  async prune(hostKey: string, before: Date): Promise<void> {
    await this.#sql(`delete from monitoring_host_samples where host_key = ? and at < ?`, [hostKey, before]);
    await this.#sql(`delete from monitoring_container_samples where host_key = ? and at < ?`, [hostKey, before]);
  }

  /** Drops every sample of the hosts. */
  async clean(hostKeys: string[], em?: EntityManager): Promise<void> {
    if (!hostKeys.length) return;
    const marks = hostKeys.map(() => '?').join(', ');
    await this.#sql(`delete from monitoring_host_samples where host_key in (${marks})`, hostKeys, em);
    await this.#sql(`delete from monitoring_container_samples where host_key in (${marks})`, hostKeys, em);
  }
}
