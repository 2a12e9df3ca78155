#!/usr/bin/env node
// What the collector costs in CPU: Berth's process time (its own and its reaped children's: the
// `cat` and `df` each host sample runs) while it samples this machine and N containers every 10 s,
// against the same Berth idle over a window of the same length.
//
//   node bench/monitoring-collector-cpu.ts [--containers N] [--seconds S] [--json FILE]
//
// The compiled Berth is started on a fresh database (BERTH_BENCH_PG, trust auth, as the other
// benches), N containers of the test base image labelled as Berth's (`berth.id`) are started and
// left to settle, and Berth's CPU time (/proc/<pid>/stat: utime + stime + cutime + cstime) is read
// over S seconds idle; then admin.setupMonitoring (refreshRate 10 for the host and the containers)
// and, after a first collection primed the counters, over S seconds again. The collections are
// counted from the host samples stored in the window. The engine's own work for the stats calls
// (dockerd's CPU) is not in Berth's figure: dockerd is shared with the other work on this machine.
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import pg from 'pg';
import { TEST_BASE_IMAGE } from '@berth/core/testing';
import { buildBerth, cleanUpBerths, median, runBench, startBerth } from './util.ts';

const { values: opt } = parseArgs({ options: { containers: { type: 'string', default: '20' }, seconds: { type: 'string', default: '120' }, json: { type: 'string' } } });
const containers = Math.max(0, Number(opt.containers));
const seconds = Math.max(20, Number(opt.seconds));
const REFRESH = 10;
const docker = new Docker();
const names = Array.from({ length: containers }, (_, i) => `berth-bench-monitoring-${process.pid}-${i}`);

/** CPU milliseconds of a process and its reaped children (clock ticks of /proc/<pid>/stat, 100 a second). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is the state (field 3): utime, stime, cutime, cstime are fields 14–17.
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) * 10;
}

async function removeContainers() {
  await Promise.all(
    names.map(n =>
      docker
        .getContainer(n)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
}

async function main() {
  buildBerth();
  const berth = await startBerth('moncpu', {});
  const pid = berth.child.pid!;
  const db = new pg.Client({ connectionString: berth.databaseUrl });
  await db.connect();
  try {
    for (const name of names) {
      const c = await docker.createContainer({ name, Image: TEST_BASE_IMAGE, Cmd: ['sleep', '3600'], Labels: { 'berth.id': name, 'berth.kind': 'probe' }, HostConfig: { Memory: 32 * 1024 * 1024 } });
      await c.start();
    }
    await sleep(10_000);
    const window = async () => {
      const before = cpuMs(pid);
      const started = performance.now();
      await sleep(seconds * 1000);
      return { ms: cpuMs(pid) - before, wall: performance.now() - started };
    };
    process.stderr.write(`idle for ${seconds} s\n`);
    const idle = await window();
    await berth.call('admin.setupMonitoring', {
      metricsConfig: {
        server: { refreshRate: REFRESH, port: 4500, token: 'bench', urlCallback: 'http://127.0.0.1:9/callback', retentionDays: 30, cronJob: '0 0 * * *', thresholds: { cpu: 0, memory: 0 } },
        containers: { refreshRate: REFRESH, services: { include: [], exclude: [] } },
      },
    });
    await sleep(2 * REFRESH * 1000); // the first collection primes the counters and reads the host's info
    const count = async () => Number((await db.query(`select count(*) as n from monitoring_host_samples`)).rows[0].n);
    const rows = async () => Number((await db.query(`select count(*) as n from monitoring_container_samples`)).rows[0].n);
    const [hostsBefore, rowsBefore] = [await count(), await rows()];
    process.stderr.write(`collecting for ${seconds} s\n`);
    const busy = await window();
    const collections = (await count()) - hostsBefore;
    // When each host sample and the workload samples after it were taken: the cadence kept, and how
    // long a host's sampling took (its figures, then the engine's list and stats of each container).
    const times = (
      await db.query(
        `select extract(epoch from h.at) * 1000 as host, (select extract(epoch from min(c.at)) * 1000 from monitoring_container_samples c where c.span = 0 and c.at >= h.at) as containers
         from monitoring_host_samples h order by h.at desc limit $1`,
        [collections],
      )
    ).rows.map(r => ({ host: Number(r.host), containers: Number(r.containers) }));
    times.reverse();
    const intervals = times.slice(1).map((x, i) => (x.host - times[i]!.host) / 1000);
    const hostPart = times.filter(x => x.containers).map(x => (x.containers - x.host) / 1000);
    const workloadRows = (await rows()) - rowsBefore;
    const perSecond = (w: { ms: number; wall: number }) => w.ms / (w.wall / 1000);
    const extra = perSecond(busy) - perSecond(idle);
    const perCollection = collections ? (busy.ms - idle.ms * (busy.wall / idle.wall)) / collections : NaN;
    console.log(`\nCollector CPU: this machine and ${containers} containers sampled every ${REFRESH} s, ${seconds} s windows, ${new Date().toISOString()}\n`);
    console.log('| Berth CPU idle (ms/s) | collecting (ms/s) | collections | workload rows | CPU per collection (ms) | share of a core | every (s, median) | host figures took (s, median) |');
    console.log('|---|---|---|---|---|---|---|---|');
    console.log(
      `| ${perSecond(idle).toFixed(2)} | ${perSecond(busy).toFixed(2)} | ${collections} | ${workloadRows} | ${perCollection.toFixed(1)} | ${(extra / 10).toFixed(2)} % | ${median(intervals).toFixed(1)} | ${median(hostPart).toFixed(2)} |`,
    );
    console.log(`\nAt one collection every ${REFRESH} s, ${perCollection.toFixed(1)} ms each would be ${(perCollection / REFRESH / 10).toFixed(2)} % of a core.`);
    if (opt.json) writeFileSync(opt.json, JSON.stringify({ containers, seconds, idle, busy, collections, workloadRows, perCollection, intervals, hostPart }, null, 2));
  } finally {
    await db.end();
    await berth.stop();
  }
}

runBench(
  'monitoring-collector-cpu',
  main,
  async () => {
    await removeContainers();
    await cleanUpBerths();
  },
  900_000,
);
