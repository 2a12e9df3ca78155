// Berth's figures for this machine against a reference that everyone trusts: Debian's
// prometheus-node-exporter running beside it, scraped every 100 ms. Over one sampling interval
// that holds a CPU spike far shorter than the interval (one core busy for 1.5 s of 8), the CPU
// usage Berth stored agrees with node-exporter's /proc/stat counters over the same interval within
// 3 percentage points; memory in use (MemTotal − MemAvailable) within 2 % of MemTotal; the root
// filesystem's use within 1 % of its size.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import t from 'tap';
import { canRun, freePort, startTestServer, signUpAdmin, waitFor } from '@berth/core/testing';

const EXPORTER = '/usr/bin/prometheus-node-exporter';
const REFRESH = 8;

if (canRun(t, 'node-exporter', existsSync(EXPORTER) ? undefined : `${EXPORTER} is not installed (scripts/services.sh installs Debian's prometheus-node-exporter)`)) {
  const exporterPort = await freePort();
  const exporter = spawn(EXPORTER, [`--web.listen-address=127.0.0.1:${exporterPort}`, '--collector.disable-defaults', '--collector.cpu', '--collector.meminfo', '--collector.filesystem'], {
    stdio: 'ignore',
  });
  t.teardown(() => void exporter.kill());
  await waitFor('node-exporter listening', async () => (await fetch(`http://127.0.0.1:${exporterPort}/metrics`).catch(() => null))?.ok ?? false);

  /** One scrape: the CPU seconds summed over every core (idle = idle + iowait, as Berth counts), memory and the root filesystem. */
  const scrape = async () => {
    const text = await (await fetch(`http://127.0.0.1:${exporterPort}/metrics`)).text();
    const at = Date.now();
    let total = 0;
    let idle = 0;
    const value = (name: string, labels = '') => {
      const line = text.split('\n').find(l => l.startsWith(`${name}${labels ? `{` : ' '}`) && (!labels || l.includes(labels)));
      if (!line) throw new Error(`node-exporter answered no ${name}${labels}`);
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    for (const l of text.split('\n')) {
      const m = /^node_cpu_seconds_total\{cpu="\d+",mode="(\w+)"\} (\S+)$/.exec(l);
      if (!m) continue;
      total += Number(m[2]);
      if (m[1] === 'idle' || m[1] === 'iowait') idle += Number(m[2]);
    }
    return {
      at,
      total,
      idle,
      memTotal: value('node_memory_MemTotal_bytes'),
      memAvailable: value('node_memory_MemAvailable_bytes'),
      rootSize: value('node_filesystem_size_bytes', 'mountpoint="/"'),
      rootAvail: value('node_filesystem_avail_bytes', 'mountpoint="/"'),
    };
  };

  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const port = await freePort();
  const TOKEN = 'node-exporter-comparison';
  const setup = await client.post('admin.setupMonitoring', {
    metricsConfig: {
      server: {
        refreshRate: REFRESH,
        port,
        token: TOKEN,
        urlCallback: 'http://127.0.0.1:9/api/trpc/notification.receiveNotification',
        retentionDays: 1,
        cronJob: '0 0 * * *',
        thresholds: { cpu: 0, memory: 0 },
      },
      containers: { refreshRate: 3600, services: { include: [], exclude: [] } },
    },
  });
  if (setup.status !== 200) throw new Error(`admin.setupMonitoring: ${setup.status} ${JSON.stringify(setup.body)}`);
  const samples = async () =>
    (await client.get('server.getServerMetrics', { url: `http://127.0.0.1:${port}/metrics`, token: TOKEN, dataPoints: 'all' })).body as {
      timestamp: string;
      cpu: string;
      memUsed: string;
      diskUsed: string;
    }[];

  // node-exporter's counters every 100 ms for the whole test.
  const scrapes: Awaited<ReturnType<typeof scrape>>[] = [await scrape()];
  let scraping = true;
  const loop = (async () => {
    while (scraping) {
      scrapes.push(await scrape());
      await new Promise(r => setTimeout(r, 100));
    }
  })();
  t.teardown(async () => {
    scraping = false;
    await loop;
  });
  /** A counter at a moment, between the two scrapes around it. */
  const at = (ms: number, k: 'total' | 'idle') => {
    const i = scrapes.findIndex(s => s.at >= ms);
    if (i <= 0) throw new Error(`no scrape around ${new Date(ms).toISOString()}`);
    const [a, b] = [scrapes[i - 1]!, scrapes[i]!];
    return a[k] + ((b[k] - a[k]) * (ms - a.at)) / Math.max(1, b.at - a.at);
  };

  t.test('CPU over an interval with a spike shorter than it', async t => {
    // A sample stored after the scrapes began: the next interval starts there.
    const first = await waitFor(
      'a sample after the scrapes began',
      async () => {
        const s = (await samples()).at(-1);
        return s && Date.parse(s.timestamp) > scrapes[0]!.at + 200 ? s : null;
      },
      { timeout: 60_000, interval: 100 },
    );
    // One core busy for 1.5 s, well inside the interval.
    await new Promise(r => setTimeout(r, 1500));
    await new Promise<void>((resolve, reject) => {
      const burn = spawn(process.execPath, ['-e', 'const end = Date.now() + 1500; while (Date.now() < end);'], { stdio: 'ignore' });
      burn.on('exit', () => resolve());
      burn.on('error', reject);
    });
    const next = await waitFor(
      'the sample that closes the interval',
      async () => {
        const all = await samples();
        const i = all.findIndex(s => s.timestamp === first.timestamp);
        return i >= 0 && all[i + 1] ? all[i + 1] : null;
      },
      { timeout: 60_000, interval: 100 },
    );
    await new Promise(r => setTimeout(r, 300)); // a scrape past the sample
    const [from, to] = [Date.parse(first.timestamp), Date.parse(next.timestamp)];
    const reference = (1 - (at(to, 'idle') - at(from, 'idle')) / (at(to, 'total') - at(from, 'total'))) * 100;
    const sampled = Number(next.cpu);
    t.ok(Math.abs(sampled - reference) <= 3, `CPU over ${((to - from) / 1000).toFixed(1)} s with a 1.5 s spike: Berth ${sampled.toFixed(2)} %, node-exporter ${reference.toFixed(2)} %`);
    // The spike is in the figure: a 1.5 s burn of one core is at least 1.5 / interval / cores of the machine.
    const cores = (at(to, 'total') - at(from, 'total')) / ((to - from) / 1000);
    t.ok(sampled >= (1.5 / ((to - from) / 1000) / cores) * 100 * 0.9, `the spike counts (${sampled.toFixed(2)} % on ${cores.toFixed(1)} cores)`);
  });

  t.test('memory and the root filesystem', async t => {
    const last = (await samples()).at(-1)!;
    const near = scrapes.reduce((best, s) => (Math.abs(s.at - Date.parse(last.timestamp)) < Math.abs(best.at - Date.parse(last.timestamp)) ? s : best));
    const memRef = ((near.memTotal - near.memAvailable) / near.memTotal) * 100;
    t.ok(Math.abs(Number(last.memUsed) - memRef) <= 2, `memory: Berth ${last.memUsed} %, node-exporter ${memRef.toFixed(2)} % of MemTotal`);
    const diskRef = ((near.rootSize - near.rootAvail) / near.rootSize) * 100;
    t.ok(Math.abs(Number(last.diskUsed) - diskRef) <= 1, `root filesystem: Berth ${last.diskUsed} %, node-exporter ${diskRef.toFixed(2)} %`);
  });
}
