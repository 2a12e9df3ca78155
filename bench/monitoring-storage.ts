#!/usr/bin/env node
// What monitoring stores per host: 30 days of samples every 10 s, of the host and 20 workloads,
// written with an injected clock into PostgreSQL and kept the way the collector keeps them.
//
//   node bench/monitoring-storage.ts [--days N] [--containers N] [--verbose] [--json FILE]
//
// Berth is started once on a fresh database (BERTH_BENCH_PG, trust auth) so its migrations make the
// monitoring tables, and stopped. Then, day by day of simulated time, a day of samples is written
// at 10 s (one host row and one row per workload each time, with the columns and JSON the collector
// writes: three mounts, three interfaces, 64-character container ids), an hour at a time: at each
// hour's end the collector's hourly fold runs on the injected clock (plugins/monitoring/src/collector.ts
// `fold`: samples older than a day into 5-minute rows, rows older than a week into hourly ones) and
// at midnight its cronJob maintenance (`maintain`: past retentionDays dropped, then the fold). A
// VACUUM runs every fifth hour, about when autovacuum's default threshold (a fifth of a table's rows
// dead) is crossed by hourly folds. The table gives pg_total_relation_size of the sample tables
// (heap, TOAST and indexes) after the first day (all of it raw: what a day costs undownsampled),
// after the last (the space VACUUM freed kept, as on a live database) and after a VACUUM FULL, with
// the row counts and the time the maintenance took.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Collector } from '../plugins/monitoring/src/collector.ts';
import { MonitoringStore } from '../plugins/monitoring/src/store.ts';
import { storedConfig } from '../plugins/monitoring/src/service.ts';
import { buildBerth, cleanUpBerths, MB, runBench, startBerth } from './util.ts';

const { values: opt } = parseArgs({ options: { days: { type: 'string', default: '30' }, containers: { type: 'string', default: '20' }, json: { type: 'string' }, verbose: { type: 'boolean' } } });
const days = Math.max(2, Number(opt.days));
const containers = Math.max(0, Number(opt.containers));
const DAY = 86_400_000;
const START = Date.parse('2027-01-01T00:00:00Z');
const HOST = 'bench0000000000000000'; // a server id's length
const TABLES = ['monitoring_series', 'monitoring_host_latest', 'monitoring_host_samples', 'monitoring_container_samples'];

async function main() {
  buildBerth();
  const berth = await startBerth('monstore', {});
  await berth.stop();
  const db = new pg.Client({ connectionString: berth.databaseUrl });
  await db.connect();
  try {
    // The store's queries, on the bench's client: `?` placeholders numbered for pg.
    const em = {
      getConnection: () => ({
        execute: async (query: string, params: unknown[] = []) => {
          let n = 0;
          return (
            await db.query(
              query.replace(/\?/g, () => `$${++n}`),
              params,
            )
          ).rows;
        },
      }),
    };
    // cast: the store needs only getConnection().execute of the core's EntityManager.
    const store = new MonitoringStore(() => em as never);
    let clock = START;
    // cast: maintain reads only the store and the hosts' settings, never the cradle.
    const collector = new Collector(
      () => ({}) as never,
      store,
      () => clock,
    );
    await store.saveSetting(
      HOST,
      storedConfig(
        {
          server: { refreshRate: 10, port: 4500, token: 'bench', urlCallback: '', retentionDays: 30, cronJob: '0 0 * * *', thresholds: { cpu: 0, memory: 0 } },
          containers: { refreshRate: 10, services: { include: [], exclude: [] } },
        },
        'Remote',
      ),
    );
    await collector.reload();
    const size = async () => {
      let bytes = 0;
      const rows: Record<string, number> = {};
      for (const t of TABLES) {
        bytes += Number((await db.query(`select pg_total_relation_size($1) as b`, [t])).rows[0].b);
        rows[t] = Number((await db.query(`select count(*) as n from ${t}`)).rows[0].n);
      }
      return { bytes, rows };
    };
    const mounts = JSON.stringify([
      { mount: '/', totalBytes: 270553174016, usedBytes: 188435435520 },
      { mount: '/boot', totalBytes: 1020702720, usedBytes: 262144000 },
      { mount: '/var/lib/docker', totalBytes: 107374182400, usedBytes: 42949672960 },
    ]);
    const devices = JSON.stringify([
      { device: 'lo', receiveBytes: 123456789, transmitBytes: 123456789 },
      { device: 'eth0', receiveBytes: 98765432101, transmitBytes: 12345678901 },
      { device: 'docker0', receiveBytes: 1234567890, transmitBytes: 2345678901 },
    ]);
    let first: Awaited<ReturnType<typeof size>> | undefined;
    const maintenance: number[] = [];
    const folds: number[] = [];
    let hours = 0;
    for (let d = 0; d < days; d++) {
      // One day at 10 s: the host's row, then one per workload, as the collector's inserts write them
      // (each under its series: the host, and each workload's container).
      if (d === 0)
        await db.query(
          `insert into monitoring_series (host_key, app_name, container_id) select $1, '', '' union all select $1, 'app-' || lpad(c::text, 2, '0') || '-bench-workload', md5(c::text) || md5((c + 1)::text) from generate_series(1, $2::int) c`,
          [HOST, containers],
        );
      for (let h = 0; h < 24; h++) {
        const from = (START + d * DAY) / 1000 + h * 3600;
        await db.query(
          `insert into monitoring_host_samples (series_id, at, cpu, mem_used, mem_total, disk_used, disk_total, net_in, net_out, uptime)
           select (select id from monitoring_series where host_key = $1 and app_name = ''), to_timestamp($2 + i * 10), random() * 100, 4e9 + random() * 1e9, 8e9, 188435435520 + i, 270553174016, 98765432101 + i * 5000, 12345678901 + i * 3000, $2::int - 1.7e9 + i * 10
           from generate_series(0, 359) i`,
          [HOST, from],
        );
        // The host's mounts and interfaces, kept for its newest sample (rewritten at each).
        await db.query(
          `insert into monitoring_host_latest (series_id, at, mounts, devices) select id, to_timestamp($2 + 3590), $3::jsonb, $4::jsonb from monitoring_series where host_key = $1 and app_name = ''
           on conflict (series_id) do update set at = excluded.at, mounts = excluded.mounts, devices = excluded.devices`,
          [HOST, from, mounts, devices],
        );
        if (containers)
          await db.query(
            `insert into monitoring_container_samples (series_id, at, cpu, mem_used, mem_limit, net_in, net_out, blk_read, blk_write)
             select s.id, to_timestamp($2 + i * 10), random() * 50, 1e8 + random() * 1e7, 1073741824, 1e6 + i * 900, 1e6 + i * 700, 5e6 + i * 100, 7e6 + i * 300
             from generate_series(0, 359) i, monitoring_series s where s.host_key = $1 and s.app_name <> ''`,
            [HOST, from],
          );
        clock = START + d * DAY + (h + 1) * 3_600_000; // the hour's end
        if (h === 23 && d === 0) first = await size();
        const t0 = performance.now();
        if (h === 23) {
          await collector.maintain(HOST); // midnight: the cronJob '0 0 * * *'
          maintenance.push(performance.now() - t0);
        } else {
          await collector.fold(HOST);
          folds.push(performance.now() - t0);
        }
        if (++hours % 5 === 0) for (const t of TABLES) await db.query(`vacuum ${t}`);
      }
      if (opt.verbose) {
        const parts = await db.query(
          `select relname, pg_relation_size(oid) as heap, pg_indexes_size(oid) as idx, pg_total_relation_size(oid) as total, (select n_dead_tup from pg_stat_user_tables s where s.relid = c.oid) as dead from pg_class c where relname = any($1)`,
          [TABLES],
        );
        console.error(
          `day ${d + 1}: ${parts.rows.map(r => `${r.relname} heap ${(r.heap / MB).toFixed(1)} index ${(r.idx / MB).toFixed(1)} total ${(r.total / MB).toFixed(1)} MB, ${r.dead} dead`).join('; ')}`,
        );
      } else process.stderr.write(`day ${d + 1}/${days}\r`);
    }
    const last = await size();
    for (const t of TABLES) await db.query(`vacuum full ${t}`);
    const compact = await size();
    const rows = [
      ['after the first day (every sample raw)', first!],
      [`after ${days} days, folded every hour, the maintenance at midnight (the last day raw, then 5-minute and hourly rows; VACUUM's free space kept)`, last],
      ['the same after VACUUM FULL (live rows only)', compact],
    ] as const;
    console.log(`\nMonitoring storage per host: samples every 10 s, ${containers} workloads, retentionDays 30, PostgreSQL ${(await db.query('show server_version')).rows[0].server_version}\n`);
    console.log('| stored | host rows | workload rows | pg_total_relation_size (MB) |');
    console.log('|---|---|---|---|');
    for (const [label, s] of rows) console.log(`| ${label} | ${s.rows.monitoring_host_samples} | ${s.rows.monitoring_container_samples} | ${(s.bytes / MB).toFixed(1)} |`);
    console.log(`\n${days} days undownsampled would be about ${((first!.bytes * days) / MB).toFixed(0)} MB (the first day × ${days}).`);
    const sorted = [...maintenance].sort((a, b) => a - b);
    const foldsSorted = [...folds].sort((a, b) => a - b);
    console.log(
      `The nightly maintenance (prune, then fold an hour): median ${(sorted[Math.floor(sorted.length / 2)]! / 1000).toFixed(2)} s, longest ${(sorted.at(-1)! / 1000).toFixed(2)} s; the hourly fold: median ${(foldsSorted[Math.floor(foldsSorted.length / 2)]! / 1000).toFixed(2)} s, longest ${(foldsSorted.at(-1)! / 1000).toFixed(2)} s.`,
    );
    if (opt.json) writeFileSync(opt.json, JSON.stringify({ days, containers, first, last, compact, maintenanceMs: maintenance, foldMs: folds }, null, 2));
  } finally {
    await db.end();
  }
}

runBench('monitoring-storage', main, cleanUpBerths, 1_800_000);
