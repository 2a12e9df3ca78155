// The samples and settings in PostgreSQL (this plugin's tables only). A host is 'local' or a
// server's id.
import type { EntityManager } from '@berth/core';
import type { HostInfo, Interface, Mount } from './readings.ts';
import type { MetricsConfig } from './schemas.ts';

export const LOCAL = 'local';

/** The resolutions a row can have: a sample (0), a 5-minute fold, an hourly fold. */
export const SPANS = [0, 300, 3600] as const;

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
}

/** The newest sample of a host, with its mounts and interfaces (kept for the newest only). */
export interface HostDetail extends HostSample {
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

  /**
   * The samples are keyed by a series (monitoring_series: a host with '' app and container, or one
   * container of a workload), so a row carries a 4-byte id instead of the names. `values` rows are
   * (app_name, container_id, …rest): each gets its series' id, made when it is new (so the id's
   * sequence moves only for a new series), and is inserted as (series_id, …rest) into `table`.
   */
  async #insert(hostKey: string, table: string, columns: string[], casts: string[], rows: unknown[][]): Promise<void> {
    if (!rows.length) return;
    const row = `(?::text, ?::text, ${casts.map(c => `?::${c}`).join(', ')})`;
    const names = columns.map(c => `i.${c}`).join(', ');
    await this.#sql(
      `with i (app_name, container_id, ${columns.join(', ')}) as (values ${rows.map(() => row).join(', ')}),
       made as (insert into monitoring_series (host_key, app_name, container_id) select distinct ?::text, app_name, container_id from i where not exists (select 1 from monitoring_series m where m.host_key = ? and m.app_name = i.app_name and m.container_id = i.container_id) on conflict do nothing returning id, app_name, container_id),
       s as (select id, app_name, container_id from made union all select id, app_name, container_id from monitoring_series where host_key = ? and (app_name, container_id) in (select app_name, container_id from i))
       insert into ${table} (series_id, ${columns.join(', ')}) select s.id, ${names} from i join s using (app_name, container_id) on conflict do nothing`,
      [...rows.flat(), hostKey, hostKey, hostKey],
    );
  }

  async addHostSample(hostKey: string, s: HostDetail): Promise<void> {
    await this.#insert(
      hostKey,
      'monitoring_host_samples',
      ['at', 'cpu', 'mem_used', 'mem_total', 'disk_used', 'disk_total', 'net_in', 'net_out', 'uptime'],
      ['timestamptz', 'real', 'bigint', 'bigint', 'bigint', 'bigint', 'bigint', 'bigint', 'integer'],
      [['', '', s.at, s.cpu, Math.round(s.memUsed), Math.round(s.memTotal), Math.round(s.diskUsed), Math.round(s.diskTotal), Math.round(s.netIn), Math.round(s.netOut), Math.round(s.uptime)]],
    );
    await this.#sql(
      `insert into monitoring_host_latest (series_id, at, mounts, devices) select id, ?, ?::jsonb, ?::jsonb from monitoring_series where host_key = ? and app_name = '' and container_id = ''
       on conflict (series_id) do update set at = excluded.at, mounts = excluded.mounts, devices = excluded.devices`,
      [s.at, JSON.stringify(s.mounts), JSON.stringify(s.devices), hostKey],
    );
  }

  async addContainerSamples(hostKey: string, samples: ContainerSample[]): Promise<void> {
    await this.#insert(
      hostKey,
      'monitoring_container_samples',
      ['at', 'cpu', 'mem_used', 'mem_limit', 'net_in', 'net_out', 'blk_read', 'blk_write'],
      ['timestamptz', 'real', 'bigint', 'bigint', 'bigint', 'bigint', 'bigint', 'bigint'],
      samples.map(s => [
        s.appName,
        s.containerId,
        s.at,
        s.cpu,
        Math.round(s.memUsed),
        Math.round(s.memLimit),
        Math.round(s.netIn),
        Math.round(s.netOut),
        Math.round(s.blkRead),
        Math.round(s.blkWrite),
      ]),
    );
  }

  /**
   * The newest `limit` rows (null: all) of `table` whose series match `where`, oldest first. The key
   * leads with the span, so the newest of each resolution are read from the index and merged.
   */
  async #newest(table: string, where: string, params: unknown[], limit: number | null, em?: EntityManager): Promise<Record<string, unknown>[]> {
    const rows = `select s.app_name, s.container_id, c.* from ${table} c join monitoring_series s on s.id = c.series_id where ${where}`;
    if (limit === null) return this.#sql(`${rows} order by c.at asc`, params, em);
    const parts = SPANS.map(span => `(${rows} and c.span = ${span} order by c.at desc limit ?)`);
    const newest = await this.#sql(`select * from (${parts.join(' union all ')}) r order by at desc limit ?`, [...SPANS.flatMap(() => [...params, limit]), limit], em);
    return newest.reverse();
  }

  /** The latest `limit` host samples (null: all), oldest first. */
  async hostSamples(hostKey: string, limit: number | null, em?: EntityManager): Promise<HostSample[]> {
    const rows = await this.#newest('monitoring_host_samples', `s.host_key = ? and s.app_name = ''`, [hostKey], limit, em);
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
    }));
  }

  /** A host's newest sample with its mounts and interfaces; null before its first. */
  async latestHostSample(hostKey: string, em?: EntityManager): Promise<HostDetail | null> {
    const [sample] = await this.hostSamples(hostKey, 1, em);
    if (!sample) return null;
    const [detail] = await this.#sql<{ mounts: Mount[]; devices: Interface[] }>(
      `select l.mounts, l.devices from monitoring_host_latest l join monitoring_series s on s.id = l.series_id where s.host_key = ? and s.app_name = ''`,
      [hostKey],
      em,
    );
    return { ...sample, mounts: detail?.mounts ?? [], devices: detail?.devices ?? [] };
  }

  /** The latest `limit` samples of one app on a host (null: all), oldest first. */
  async containerSamples(hostKey: string, appName: string, limit: number | null, em?: EntityManager): Promise<ContainerSample[]> {
    return (await this.#newest('monitoring_container_samples', 's.host_key = ? and s.app_name = ?', [hostKey, appName], limit, em)).map(containerSample);
  }

  /** The newest sample of each app on a host, of those taken since `since` (samples: a fold is at least a day old). */
  async latestContainerSamples(hostKey: string, since: Date, em?: EntityManager): Promise<ContainerSample[]> {
    const rows = await this.#sql<Record<string, unknown>>(
      `select distinct on (s.app_name) s.app_name, s.container_id, c.* from monitoring_container_samples c join monitoring_series s on s.id = c.series_id where s.host_key = ? and s.app_name <> '' and c.span = 0 and c.at >= ? order by s.app_name, c.at desc`,
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
   * Folds one host's rows taken before `before` (a multiple of `bucketSeconds`) that are finer than
   * `bucketSeconds` into one row per `bucketSeconds` (span = bucketSeconds, `at` its start): gauges
   * averaged (CPU, memory and disk in use), sizes and the since-boot counters (network, block IO) at
   * their maximum; a workload's rows under the series (container) of its last. Rows as coarse are left as they are. Answers the rows folded
   * and the rows written.
   */
  async downsample(hostKey: string, before: Date, bucketSeconds: number, em?: EntityManager): Promise<{ folded: number; written: number }> {
    const size = Number(bucketSeconds);
    const bucket = `to_timestamp(floor(extract(epoch from at) / ${size}) * ${size})`;
    // One statement each: the finer rows are deleted and their folds inserted in it, so a fold at a
    // bucket's start replaces the row that was there.
    const hosts = await this.#sql<{ n: string; w: string }>(
      `with raw as (delete from monitoring_host_samples h using monitoring_series s where s.id = h.series_id and s.host_key = ? and h.at < ? and h.span < ? returning h.*),
       folded as (insert into monitoring_host_samples (series_id, at, cpu, mem_used, mem_total, disk_used, disk_total, net_in, net_out, uptime, span)
         select series_id, ${bucket}, avg(cpu), round(avg(mem_used)), max(mem_total), round(avg(disk_used)), max(disk_total), max(net_in), max(net_out), max(uptime), ?::smallint
         from raw group by series_id, ${bucket} returning 1)
       select (select count(*) from raw) as n, (select count(*) from folded) as w`,
      [hostKey, before, size, size],
      em,
    );
    const containers = await this.#sql<{ n: string; w: string }>(
      `with raw as (delete from monitoring_container_samples c using monitoring_series s where s.id = c.series_id and s.host_key = ? and c.at < ? and c.span < ? returning c.*, s.app_name),
       folded as (insert into monitoring_container_samples (series_id, at, cpu, mem_used, mem_limit, net_in, net_out, blk_read, blk_write, span)
         select (array_agg(series_id order by at desc))[1], ${bucket}, avg(cpu), round(avg(mem_used)), max(mem_limit), max(net_in), max(net_out), max(blk_read), max(blk_write), ?::smallint
         from raw group by app_name, ${bucket} returning 1)
       select (select count(*) from raw) as n, (select count(*) from folded) as w`,
      [hostKey, before, size, size],
      em,
    );
    const total = (k: 'n' | 'w') => Number(hosts[0]?.[k] ?? 0) + Number(containers[0]?.[k] ?? 0);
    return { folded: total('n'), written: total('w') };
  }

  /** Drops samples older than `before` of one host, and the series left without any. */
  async prune(hostKey: string, before: Date): Promise<void> {
    const series = `select id from monitoring_series where host_key = ?`;
    await this.#sql(`delete from monitoring_host_samples where series_id in (${series}) and at < ?`, [hostKey, before]);
    await this.#sql(`delete from monitoring_container_samples where series_id in (${series}) and at < ?`, [hostKey, before]);
    await this.#sql(
      `delete from monitoring_series s where host_key = ? and not exists (select 1 from monitoring_host_samples where span in (${SPANS}) and series_id = s.id)
       and not exists (select 1 from monitoring_container_samples where span in (${SPANS}) and series_id = s.id)`,
      [hostKey],
    );
  }

  /** Drops every sample of the hosts (with their series: the samples follow by the foreign key). */
  async clean(hostKeys: string[], em?: EntityManager): Promise<void> {
    if (!hostKeys.length) return;
    await this.#sql(`delete from monitoring_series where host_key in (${hostKeys.map(() => '?').join(', ')})`, hostKeys, em);
  }
}
