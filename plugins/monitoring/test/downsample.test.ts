// Downsampling with an injected clock, on the real PostgreSQL: five days of samples every 10 s (a
// host and two workloads), then the cronJob's work at the end of the fifth day with retentionDays 3:
// the two oldest days are dropped, the next two folded into 5-minute rows (gauges averaged, the
// since-boot counters at their maximum), the last day left whole; a second run changes nothing; and
// server.getServerMetrics and user.getContainerMetrics answer the peer's shapes over the result.
import t from 'tap';
import { signUpAdmin, startTestServer } from '@berth/core/testing';
import { Collector, DOWNSAMPLE_SECONDS, nextRun } from '../src/collector.ts';
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

t.test('five days folded and pruned', async t => {
  const server = await startTestServer({ proxy: 'none', jobs: false });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const PORT = 4512;
  const TOKEN = 'downsample-token';
  const setup = await client.post('admin.setupMonitoring', {
    metricsConfig: {
      server: { refreshRate: 10, port: PORT, token: TOKEN, urlCallback: 'http://127.0.0.1:9/cb', retentionDays: 3, cronJob: '0 0 * * *', thresholds: { cpu: 0, memory: 0 } },
      containers: { refreshRate: 10, services: { include: [], exclude: [] } },
    },
  });
  t.equal(setup.status, 200, JSON.stringify(setup.body));
  const cradle = server.kernel.container.cradle;
  // cast: the store takes the core's EntityManager type; a fork of the ORM's is one.
  const store = new MonitoringStore(() => cradle.orm.em.fork() as never);
  let clock = START + 5 * DAY;
  const collector = new Collector(
    () => cradle,
    store,
    () => clock,
  );
  await collector.reload();
  const sql = <T = Record<string, unknown>>(q: string, params: unknown[] = []) => cradle.orm.em.fork().getConnection().execute<T[]>(q, params);

  // Sample i at START + 10 s·i: CPU i mod 30 (0…29 in each 5-minute bucket, 14.5 on average),
  // memory 1000·(i mod 30), the network counter 100·i (rising, as since boot).
  const n = 5 * PER_DAY;
  await sql(
    `insert into monitoring_host_samples (host_key, at, cpu, mem_used, mem_total, disk_used, disk_total, net_in, net_out, uptime, mounts, devices)
     select ?, to_timestamp(? + i * 10), i % 30, 1000 * (i % 30), 100000, 500 + (i % 2) * 100, 1000, 100 * i, 50 * i, i * 10, '[{"mount":"/","totalBytes":1000,"usedBytes":500}]'::jsonb, '[{"device":"eth0","receiveBytes":0,"transmitBytes":0}]'::jsonb
     from generate_series(0, ? - 1) i`,
    [LOCAL, START / 1000, n],
  );
  await sql(
    `insert into monitoring_container_samples (host_key, app_name, at, container_id, cpu, mem_used, mem_limit, net_in, net_out, blk_read, blk_write)
     select ?, app, to_timestamp(? + i * 10), 'c-' || app, (i % 30) * 2, 2048 * (i % 30), 1048576, 10 * i, 20 * i, 30 * i, 40 * i
     from generate_series(0, ? - 1) i, (values ('app-a'), ('app-b')) apps(app)`,
    [LOCAL, START / 1000, n],
  );
  const count = async (table: string, where = 'true') => Number((await sql<{ n: string }>(`select count(*) as n from ${table} where host_key = ? and ${where}`, [LOCAL]))[0]!.n);

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
  const [bucket] = await sql<Record<string, string | number>>(`select * from monitoring_host_samples where host_key = ? and at = to_timestamp(?)`, [LOCAL, (START + 2 * DAY) / 1000]);
  t.equal(Number(bucket?.cpu), 14.5, 'CPU averaged');
  t.equal(Number(bucket?.mem_used), 14500, 'memory averaged');
  t.equal(Number(bucket?.disk_used), 550, 'disk averaged');
  t.equal(Number(bucket?.net_in), 100 * (i0 + PER_BUCKET - 1), 'the network counter at its last (highest) value');
  t.equal(Number(bucket?.uptime), 10 * (i0 + PER_BUCKET - 1), 'uptime at its last');
  const [app] = await sql<Record<string, string | number>>(`select * from monitoring_container_samples where host_key = ? and app_name = 'app-b' and at = to_timestamp(?)`, [
    LOCAL,
    (START + 2 * DAY) / 1000,
  ]);
  t.equal(Number(app?.cpu), 29, "a workload's CPU averaged");
  t.equal(Number(app?.mem_used), 2048 * 14.5, 'its memory averaged');
  t.equal(Number(app?.blk_write), 40 * (i0 + PER_BUCKET - 1), 'its block IO counter at its highest');

  t.same(await collector.maintain(LOCAL), { folded: 0, written: 0 }, 'a second run at the same time changes nothing');
  clock += 3_600_000;
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
