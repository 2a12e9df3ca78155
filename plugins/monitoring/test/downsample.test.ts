// Downsampling with an injected clock, on the real PostgreSQL: five days of samples every 10 s (a
// host and two workloads), then the cronJob's work at the end of the fifth day with retentionDays 3:
// the two oldest days are dropped, the next two folded into 5-minute rows (gauges averaged, the
// since-boot counters at their maximum), the last day left whole; a second run changes nothing; and
// server.getServerMetrics and user.getContainerMetrics answer the peer's shapes over the result. Nine
// days with retentionDays 30 leave hourly rows past a week; and rows written in the layout before
// the series migration read back the same after it.
import t, { type Test } from 'tap';
import { Client, signUpAdmin, startTestServer } from '@berth/core/testing';
import { Collector, DOWNSAMPLE_SECONDS, HOURLY_SECONDS, nextRun } from '../src/collector.ts';
import { LOCAL, MonitoringStore } from '../src/store.ts';

const DAY = 86_400_000;
const START = Date.parse('2027-03-01T00:00:00Z');
const PER_DAY = 8640; // one sample every 10 s
const PER_BUCKET = DOWNSAMPLE_SECONDS / 10;

t.test('the cronJob runs at its next time, UTC', async t => {
  t.equal(new Date(nextRun('30 2 * * *', START)).toISOString(), '2027-03-01T02:30:00.000Z');
  t.equal(new Date(nextRun('30 2 * * *', START + 3 * 3_600_000)).toISOString(), '2027-03-02T02:30:00.000Z', 'the next day once passed');
  t.equal(nextRun('not a cron', START), START + 3_600_000, 'an hour on for one that does not parse');
});

type Sql = <T = Record<string, unknown>>(q: string, params?: unknown[]) => Promise<T[]>;
const PORT = 4512;
const TOKEN = 'downsample-token';

/** A server with this machine set up for monitoring, a collector on the injected clock, and SQL on its database. */
async function monitored(t: Test, retentionDays: number, clockAt: number) {
  const server = await startTestServer({ proxy: 'none', jobs: false });
  t.teardown(() => server.destroy());
  const { client, apiKey } = await signUpAdmin(server);
  const setup = await client.post('admin.setupMonitoring', {
    metricsConfig: {
      server: { refreshRate: 10, port: PORT, token: TOKEN, urlCallback: 'http://127.0.0.1:9/cb', retentionDays, cronJob: '0 0 * * *', thresholds: { cpu: 0, memory: 0 } },
      containers: { refreshRate: 10, services: { include: [], exclude: [] } },
    },
  });
  t.equal(setup.status, 200, JSON.stringify(setup.body));
  const cradle = server.kernel.container.cradle;
  // cast: the store takes the core's EntityManager type; a fork of the ORM's is one.
  const store = new MonitoringStore(() => cradle.orm.em.fork() as never);
  const clock = { now: clockAt };
  const collector = new Collector(
    () => cradle,
    store,
    () => clock.now,
  );
  await collector.reload();
  const sql: Sql = (q, params = []) => cradle.orm.em.fork().getConnection().execute(q, params);
  return { server, client, apiKey, collector, clock, sql };
}

/**
 * Samples `from` … `to` − 1 of this machine and two workloads (app-a, app-b), each under its series;
 * sample i at START + 10 s·i: CPU i mod 30 (0…29 in each 5-minute bucket, 14.5 on average), memory
 * 1000·(i mod 30), the network counter 100·i (rising, as since boot).
 */
async function writeSamples(sql: Sql, from: number, to: number) {
  await sql(`insert into monitoring_series (host_key, app_name, container_id) values (?, '', ''), (?, 'app-a', 'c-app-a'), (?, 'app-b', 'c-app-b') on conflict do nothing`, [LOCAL, LOCAL, LOCAL]);
  await sql(
    `insert into monitoring_host_samples (series_id, at, cpu, mem_used, mem_total, disk_used, disk_total, net_in, net_out, uptime)
     select s.id, to_timestamp(? + i * 10), i % 30, 1000 * (i % 30), 100000, 500 + (i % 2) * 100, 1000, 100 * i, 50 * i, i * 10
     from generate_series(?, ? - 1) i, monitoring_series s where s.host_key = ? and s.app_name = ''`,
    [START / 1000, from, to, LOCAL],
  );
  await sql(
    `insert into monitoring_container_samples (series_id, at, cpu, mem_used, mem_limit, net_in, net_out, blk_read, blk_write)
     select s.id, to_timestamp(? + i * 10), (i % 30) * 2, 2048 * (i % 30), 1048576, 10 * i, 20 * i, 30 * i, 40 * i
     from generate_series(?, ? - 1) i, monitoring_series s where s.host_key = ? and s.app_name <> ''`,
    [START / 1000, from, to, LOCAL],
  );
}

const countRows = async (sql: Sql, table: string, where = 'true') =>
  Number((await sql<{ n: string }>(`select count(*) as n from ${table} c join monitoring_series s on s.id = c.series_id where s.host_key = ? and ${where}`, [LOCAL]))[0]!.n);

t.test('five days folded and pruned', async t => {
  const { client, collector, clock, sql } = await monitored(t, 3, START + 5 * DAY);

  // Sample i at START + 10 s·i: CPU i mod 30 (0…29 in each 5-minute bucket, 14.5 on average),
  // memory 1000·(i mod 30), the network counter 100·i (rising, as since boot).
  const n = 5 * PER_DAY;
  await writeSamples(sql, 0, n);
  const count = (table: string, where = 'true') => countRows(sql, table, where);
  const started = Date.now();
  const done = await collector.maintain(LOCAL);
  t.comment(`maintenance over ${3 * n} rows: ${Date.now() - started} ms`);
  const folded = 2 * PER_DAY; // days 3 and 4 of 5 (the first two are past retentionDays)
  const buckets = folded / PER_BUCKET;
  t.same(done, { folded: 3 * folded, written: 3 * buckets }, 'two days of the host and two workloads folded into 5-minute rows');
  t.equal(await count('monitoring_host_samples', 'span = 0'), PER_DAY, 'the last day is whole');
  t.equal(await count('monitoring_host_samples', `span = ${DOWNSAMPLE_SECONDS}`), buckets, 'the two days before it are 5-minute rows');
  t.equal(await count('monitoring_host_samples', `at < to_timestamp(${(START + 2 * DAY) / 1000})`), 0, 'nothing older than retentionDays');
  t.equal(await count('monitoring_container_samples', 'span = 0'), 2 * PER_DAY);
  t.equal(await count('monitoring_container_samples', `span = ${DOWNSAMPLE_SECONDS}`), 2 * buckets);

  // The bucket at the start of day 2: samples i0 … i0+29.
  const i0 = 2 * PER_DAY;
  const [bucket] = await sql<Record<string, string | number>>(
    `select c.* from monitoring_host_samples c join monitoring_series s on s.id = c.series_id where s.host_key = ? and c.at = to_timestamp(?)`,
    [LOCAL, (START + 2 * DAY) / 1000],
  );
  t.equal(Number(bucket?.cpu), 14.5, 'CPU averaged');
  t.equal(Number(bucket?.mem_used), 14500, 'memory averaged');
  t.equal(Number(bucket?.disk_used), 550, 'disk averaged');
  t.equal(Number(bucket?.net_in), 100 * (i0 + PER_BUCKET - 1), 'the network counter at its last (highest) value');
  t.equal(Number(bucket?.uptime), 10 * (i0 + PER_BUCKET - 1), 'uptime at its last');
  const [app] = await sql<Record<string, string | number>>(
    `select c.* from monitoring_container_samples c join monitoring_series s on s.id = c.series_id where s.host_key = ? and s.app_name = 'app-b' and c.at = to_timestamp(?)`,
    [LOCAL, (START + 2 * DAY) / 1000],
  );
  t.equal(Number(app?.cpu), 29, "a workload's CPU averaged");
  t.equal(Number(app?.mem_used), 2048 * 14.5, 'its memory averaged');
  t.equal(Number(app?.blk_write), 40 * (i0 + PER_BUCKET - 1), 'its block IO counter at its highest');

  t.same(await collector.maintain(LOCAL), { folded: 0, written: 0 }, 'a second run at the same time changes nothing');
  clock.now += 3_600_000;
  t.same(await collector.maintain(LOCAL), { folded: 3 * 360, written: 3 * 12 }, 'an hour later, that hour is folded: 360 samples of each into 12 rows');
  t.equal(await count('monitoring_host_samples', `span = ${DOWNSAMPLE_SECONDS}`), buckets, 'and the oldest hour of 5-minute rows dropped (12 in, 12 out)');
  t.equal(await count('monitoring_host_samples', `at < to_timestamp(${(START + 2 * DAY + 3_600_000) / 1000})`), 0, 'nothing older than retentionDays');

  // The peer's shapes over the folded rows and the raw ones.
  const metrics = await client.get('server.getServerMetrics', { url: `http://localhost:${PORT}/metrics`, token: TOKEN, dataPoints: 'all' });
  t.equal(metrics.status, 200);
  t.equal(metrics.body.length, buckets + PER_DAY - 360, 'every row, folded or not');
  const first = metrics.body[0];
  t.same(Object.keys(first).sort(), Object.keys(metrics.body.at(-1)).sort(), 'a folded row has the shape of a sample');
  t.match(first, { cpu: '14.50', memUsed: '14.50', diskUsed: '55.00', timestamp: new Date(START + 2 * DAY + 3_600_000).toISOString() });
  const containers = await client.get('user.getContainerMetrics', { url: `http://localhost:${PORT}`, token: TOKEN, appName: 'app-a', dataPoints: 'all' });
  t.equal(containers.status, 200);
  t.equal(containers.body.length, buckets + PER_DAY - 360);
  t.match(containers.body[0], { CPU: 29, Memory: { used: 0.03, total: 1, usedUnit: 'MB' }, Name: 'app-a' });
});

t.test('past a week, hourly rows', async t => {
  const { client, collector, sql } = await monitored(t, 30, START + 9 * DAY);
  await writeSamples(sql, 0, 9 * PER_DAY);
  const hours = 2 * 24; // days 0 and 1 are older than a week
  const fiveMinutes = 6 * (PER_DAY / PER_BUCKET); // days 2–7
  const done = await collector.maintain(LOCAL);
  t.same(
    done,
    { folded: 3 * (8 * PER_DAY + 2 * (PER_DAY / PER_BUCKET)), written: 3 * (8 * (PER_DAY / PER_BUCKET) + hours) },
    'eight days folded into 5-minute rows, the oldest two of them into hours',
  );
  for (const table of ['monitoring_host_samples', 'monitoring_container_samples']) {
    const per = table === 'monitoring_host_samples' ? 1 : 2;
    t.equal(await countRows(sql, table, `span = ${HOURLY_SECONDS}`), per * hours, `${table}: two days of hourly rows`);
    t.equal(await countRows(sql, table, `span = ${DOWNSAMPLE_SECONDS}`), per * fiveMinutes, 'six days of 5-minute rows');
    t.equal(await countRows(sql, table, 'span = 0'), per * PER_DAY, 'the last day whole');
  }
  const [hour] = await sql<Record<string, string | number>>(
    `select c.* from monitoring_host_samples c join monitoring_series s on s.id = c.series_id where s.host_key = ? and c.at = to_timestamp(?)`,
    [LOCAL, START / 1000],
  );
  t.equal(Number(hour?.span), HOURLY_SECONDS);
  t.equal(Number(hour?.cpu), 14.5, 'CPU averaged over the hour');
  t.equal(Number(hour?.mem_used), 14500, 'memory averaged');
  t.equal(Number(hour?.net_in), 100 * 359, "the network counter at the hour's last sample");
  t.same(await collector.maintain(LOCAL), { folded: 0, written: 0 }, 'a second run changes nothing');

  // The newest rows across the three resolutions, in order.
  const all = await client.get('server.getServerMetrics', { url: `http://localhost:${PORT}/metrics`, token: TOKEN, dataPoints: 'all' });
  t.equal(all.body.length, hours + fiveMinutes + PER_DAY);
  const times = all.body.map((r: { timestamp: string }) => Date.parse(r.timestamp));
  t.ok(
    times.every((v: number, i: number) => i === 0 || v > times[i - 1]),
    'oldest first, each once',
  );
  const some = await client.get('server.getServerMetrics', { url: `http://localhost:${PORT}/metrics`, token: TOKEN, dataPoints: String(PER_DAY + fiveMinutes + 5) });
  t.equal(some.body.length, PER_DAY + fiveMinutes + 5);
  t.equal(some.body[0].timestamp, new Date(START + 2 * DAY - 5 * 3_600_000).toISOString(), 'the newest five hours, then every 5-minute row and sample');
  t.same(some.body, all.body.slice(-some.body.length));
  const app = await client.get('user.getContainerMetrics', { url: `http://localhost:${PORT}`, token: TOKEN, appName: 'app-b', dataPoints: String(fiveMinutes + PER_DAY + 1) });
  t.match(app.body[0], { timestamp: new Date(START + 2 * DAY - 3_600_000).toISOString(), CPU: 29, ID: 'c-app-b', Name: 'app-b' });
});

t.test('samples stored before the series migration read back after it', async t => {
  const first = await monitored(t, 30, START + DAY);
  const { sql } = first;
  // The tables as the two earlier migrations left them, with rows in them.
  await sql(`drop table monitoring_host_latest, monitoring_host_samples, monitoring_container_samples, monitoring_series`);
  await sql(
    `create table "monitoring_host_samples" ("host_key" varchar(32) not null, "at" timestamptz not null, "cpu" real not null, "mem_used" bigint not null, "mem_total" bigint not null, "disk_used" bigint not null, "disk_total" bigint not null, "net_in" bigint not null, "net_out" bigint not null, "uptime" integer not null, "mounts" jsonb not null, "devices" jsonb not null, "span" integer not null default 0, primary key ("host_key", "at"))`,
  );
  await sql(
    `create table "monitoring_container_samples" ("host_key" varchar(32) not null, "app_name" varchar(255) not null, "at" timestamptz not null, "container_id" varchar(64) not null, "cpu" real not null, "mem_used" bigint not null, "mem_limit" bigint not null, "net_in" bigint not null, "net_out" bigint not null, "blk_read" bigint not null, "blk_write" bigint not null, "span" integer not null default 0, primary key ("host_key", "app_name", "at"))`,
  );
  const at = (minutes: number) => new Date(START + minutes * 60_000);
  const mounts = (used: number) => JSON.stringify([{ mount: '/', totalBytes: 1000, usedBytes: used }]);
  const devices = JSON.stringify([{ device: 'eth0', receiveBytes: 7, transmitBytes: 9 }]);
  await sql(
    `insert into monitoring_host_samples (host_key, at, cpu, mem_used, mem_total, disk_used, disk_total, net_in, net_out, uptime, mounts, devices, span) values
     (?, ?, 12.5, 4294967296, 8589934592, 400, 1000, 5368709120, 1048576, 3600, ?::jsonb, ?::jsonb, 300), (?, ?, 50, 2147483648, 8589934592, 500, 1000, 6442450944, 2097152, 4000, ?::jsonb, ?::jsonb, 0)`,
    [LOCAL, at(0), mounts(400), devices, LOCAL, at(10), mounts(500), devices],
  );
  await sql(
    `insert into monitoring_container_samples (host_key, app_name, at, container_id, cpu, mem_used, mem_limit, net_in, net_out, blk_read, blk_write, span) values
     (?, 'app-a', ?, 'old-container', 10, 1048576, 4194304, 1, 2, 3, 4, 300), (?, 'app-a', ?, 'new-container', 20, 2097152, 4194304, 5, 6, 7, 8, 0), (?, 'app-b', ?, 'b-container', 30, 3145728, 4194304, 9, 10, 11, 12, 0)`,
    [LOCAL, at(0), LOCAL, at(10), LOCAL, at(10)],
  );
  await sql(`delete from berth_migrations where name = ?`, ['Migration20270127000000_monitoring_series']);

  const server = await first.server.restart();
  const client = new Client(server.url, { apiKey: first.apiKey });
  const after = await client.get('server.getServerMetrics', { url: `http://localhost:${PORT}/metrics`, token: TOKEN, dataPoints: 'all' });
  t.equal(after.status, 200);
  t.match(after.body, [
    { cpu: '12.50', memUsed: '50.00', memUsedGB: '4.00', memTotal: '8.00', networkIn: '5120.00', networkOut: '1.00', diskUsed: '40.00', uptime: 3600, timestamp: at(0).toISOString() },
    { cpu: '50.00', memUsed: '25.00', memUsedGB: '2.00', networkIn: '6144.00', networkOut: '2.00', diskUsed: '50.00', uptime: 4000, timestamp: at(10).toISOString() },
  ]);
  t.equal(after.body.length, 2, 'both host rows, with their figures');
  const a = await client.get('user.getContainerMetrics', { url: `http://localhost:${PORT}`, token: TOKEN, appName: 'app-a', dataPoints: 'all' });
  t.match(a.body, [
    { timestamp: at(0).toISOString(), CPU: 10, ID: 'old-container', Memory: { used: 1 }, BlockIO: { write: 0 } },
    { timestamp: at(10).toISOString(), CPU: 20, ID: 'new-container', Memory: { used: 2 } },
  ]);
  t.equal(a.body.length, 2, "each of app-a's containers kept as its own series");
  const b = await client.get('user.getContainerMetrics', { url: `http://localhost:${PORT}`, token: TOKEN, appName: 'app-b', dataPoints: '5' });
  t.match(b.body, [{ CPU: 30, ID: 'b-container', Memory: { used: 3 } }]);
  const sql2: Sql = (q, params = []) => server.kernel.container.cradle.orm.em.fork().getConnection().execute(q, params);
  t.same(
    await sql2(`select l.mounts from monitoring_host_latest l join monitoring_series s on s.id = l.series_id where s.host_key = ?`, [LOCAL]),
    [{ mounts: JSON.parse(mounts(500)) }],
    'the newest mounts kept for the host',
  );
  t.same(await sql2(`select count(*)::int as n from information_schema.tables where table_name like 'monitoring_%_v1'`), [{ n: 0 }], 'the old tables are gone');
});
