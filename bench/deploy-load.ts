#!/usr/bin/env node
// What a client sees while an application is redeployed (issue 51): constant keep-alive HTTP load
// through Caddy at an application with a domain, while the application gets N new releases (each an
// env change, so each deploy replaces the task), counting the requests that failed (a reset, a
// timeout, a refused connection) or answered something other than 2xx, and the latency while idle
// and during the deploys.
//
//   node bench/deploy-load.ts [--deploys N] [--rate R] [--connections C] [--start-delay S] [--variant without|with|stop-first|both|all] [--json FILE]
//
// Berth runs as a child process started like scripts/start.sh (compiled build, production flags)
// with the caddy proxy (the berth-test/caddy:1 image: Debian's Caddy 2.6) on free host ports, on a
// PostgreSQL database the bench creates and drops. Variants: `without` a health check, `with` one
// (`nc` to the app's port every 250 ms, 3 failures make it unhealthy once the start delay and
// 3 s have passed), and `stop-first` (without, and updateConfigSwarm's Order
// stop-first: what a host-mode port forces); `both` is the first two, `all` the three. The
// application is busybox httpd serving the release number, listening --start-delay seconds after
// its start (default 2: an app that takes a moment to boot); on SIGTERM it keeps serving for 1 s,
// then stops (an app that drains).
//
// The load is open-loop: a request starts every 1000/R ms whatever the others do, over an
// http.Agent of C keep-alive sockets to Caddy's port, with the domain's Host header; a request
// that takes more than 10 s counts as failed. "During deploys" is from each application.deploy
// call to its deployment's `done`, plus 5 s after it (the old task is stopped after the new one
// runs). Every release must be served (the body names it) before the next deploy starts.
// Everything it creates (services, database, data dir) is removed, also on failure.
import http from 'node:http';
import os from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildBerth, cleanUpBerths, freePort, median, removeServices, runBench, startBerth, until, type Berth } from './util.ts';

const { values: opt } = parseArgs({
  options: {
    deploys: { type: 'string', default: '20' },
    rate: { type: 'string', default: '200' },
    connections: { type: 'string', default: '16' },
    'start-delay': { type: 'string', default: '2' },
    variant: { type: 'string', default: 'both' },
    json: { type: 'string' },
  },
});
const deploys = Math.max(1, Number(opt.deploys));
const rate = Math.max(1, Number(opt.rate));
const connections = Math.max(1, Number(opt.connections));
const variants = opt.variant === 'both' ? ['without', 'with'] : opt.variant === 'all' ? ['without', 'with', 'stop-first'] : [opt.variant!];
const LABELS: Record<string, string> = { without: 'without health check', with: 'with health check', 'stop-first': 'stop-first, without health check' };
for (const v of variants) if (!LABELS[v]) throw new Error(`--variant: ${v}? Use without, with, stop-first, both or all`);
const suffix = randomBytes(3).toString('hex');
const PROXY = `bench-proxy-${suffix}`;
const services: string[] = [PROXY];
const IMAGE = 'berth-test/busybox:1';
const startDelay = Math.max(0, Number(opt['start-delay']));
// The release in the body, served after the start delay; on SIGTERM, 1 s more of serving, then out (a graceful app's drain).
const SITE = `mkdir -p /www && echo "release $RELEASE" > /www/index.html && sleep ${startDelay} && httpd -f -p 3000 -h /www & pid=$!; trap "sleep 1; kill $pid; exit 0" TERM; wait`;
// Failures while the app boots (its start delay, and 3 s more) do not count against it.
const HEALTH = { Test: ['CMD-SHELL', 'echo | nc -w 1 127.0.0.1 3000 >/dev/null'], Interval: 250_000_000, Timeout: 1_000_000_000, StartPeriod: (startDelay + 3) * 1e9, Retries: 3 };

interface Sample {
  start: number;
  ms: number;
  status: number;
  error: string | null;
  body: string;
}

/** Open-loop load: one GET every 1000/rate ms until stopped; every answer recorded. */
function load(port: number, host: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const samples: Sample[] = [];
  let stopped = false;
  let inFlight = 0;
  const one = () => {
    const start = performance.now();
    inFlight++;
    const done = (status: number, error: string | null, body: string) => {
      inFlight--;
      samples.push({ start, ms: performance.now() - start, status, error, body });
    };
    const req = http.get({ host: '127.0.0.1', port, path: '/', headers: { host }, agent, timeout: 10_000 }, res => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', c => (body += c));
      res.on('end', () => done(res.statusCode ?? 0, null, body.trim()));
      res.on('error', e => done(res.statusCode ?? 0, (e as NodeJS.ErrnoException).code ?? e.message, body));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', e => done(0, (e as NodeJS.ErrnoException).code ?? e.message, ''));
  };
  const t0 = performance.now();
  let sent = 0;
  const tick = async () => {
    while (!stopped) {
      const due = Math.floor(((performance.now() - t0) * rate) / 1000);
      while (sent < due) {
        sent++;
        one();
      }
      await sleep(2);
    }
  };
  const running = tick();
  return {
    samples,
    last: () => samples.at(-1),
    async stop() {
      stopped = true;
      await running;
      await until('the last requests', async () => (inFlight === 0 ? true : undefined), 15_000);
      agent.destroy();
    },
  };
}

const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const fmt = (x: number) => (Number.isFinite(x) ? `${x.toFixed(1)}` : '–');

async function deploy(berth: Berth, applicationId: string) {
  const res = await berth.send('application.deploy', { applicationId });
  const body = await res.text();
  if (!res.ok) throw new Error(`application.deploy: ${res.status} ${body.slice(0, 300)}`);
  const deploymentId = res.headers.get('x-berth-deployment-id')!;
  const end = await until('the deployment', async () => {
    const d = await berth.call('deployment.one', { deploymentId }, 'GET');
    return ['done', 'error', 'cancelled'].includes(d.state) ? d : undefined;
  });
  if (end.state !== 'done') throw new Error(`the deployment ended ${end.state}: ${end.errorMessage}`);
  return end as { logPath: string };
}

async function variant(berth: Berth, environmentId: string, httpPort: number, kind: string) {
  const health = kind === 'with';
  const host = `load-${kind}.test`;
  const app = await berth.call('application.create', { name: `load-${kind}`, environmentId });
  services.push(app.appName);
  await berth.call('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: IMAGE });
  await berth.call('application.update', {
    applicationId: app.applicationId,
    command: 'sh',
    args: ['-c', SITE],
    ...(health ? { healthCheckSwarm: HEALTH } : {}),
    ...(kind === 'stop-first' ? { updateConfigSwarm: { Parallelism: 1, Order: 'stop-first', FailureAction: 'rollback' } } : {}),
  });
  await berth.call('application.saveEnvironment', { applicationId: app.applicationId, env: 'RELEASE=0' });
  await berth.call('domain.create', { host, applicationId: app.applicationId, port: 3000 });
  await deploy(berth, app.applicationId);
  const ask = () =>
    new Promise<string | undefined>(resolve => {
      http
        .get({ host: '127.0.0.1', port: httpPort, path: '/', headers: { host }, agent: false }, res => {
          let b = '';
          res.on('data', c => (b += c));
          res.on('end', () => resolve(res.statusCode === 200 ? b.trim() : undefined));
        })
        .on('error', () => resolve(undefined));
    });
  await until(`${host} through Caddy`, async () => ((await ask()) === 'release 0' ? true : undefined), 60_000);

  const l = load(httpPort, host);
  await sleep(10_000); // idle: the latency without deploys
  const idleEnd = performance.now();
  const windows: [number, number][] = [];
  const deployMs: number[] = [];
  const servedMs: number[] = [];
  let log = '';
  for (let i = 1; i <= deploys; i++) {
    await berth.call('application.saveEnvironment', { applicationId: app.applicationId, env: `RELEASE=${i}` });
    const t0 = performance.now();
    const d = await deploy(berth, app.applicationId);
    const t1 = performance.now();
    deployMs.push(t1 - t0);
    if (i === 1) log = readFileSync(d.logPath, 'utf8');
    // The new release must really serve before the next deploy (the positive control).
    await until(`release ${i} served`, async () => (l.samples.some(s => s.start > t0 && s.body === `release ${i}`) ? true : undefined), 30_000);
    servedMs.push(l.samples.find(s => s.start > t0 && s.body === `release ${i}`)!.start - t0);
    await sleep(5_000); // the old task's stop happens after the new one runs
    windows.push([t0, performance.now()]);
  }
  await l.stop();

  const all = l.samples;
  const failed = all.filter(s => s.error !== null);
  const non2xx = all.filter(s => s.error === null && (s.status < 200 || s.status > 299));
  const ok = all.filter(s => s.error === null && s.status >= 200 && s.status <= 299);
  const idle = ok.filter(s => s.start < idleEnd).map(s => s.ms);
  const during = ok.filter(s => windows.some(([a, b]) => s.start >= a && s.start < b)).map(s => s.ms);
  const kinds = (xs: Sample[]) =>
    Object.entries(
      xs.reduce<Record<string, number>>((m, s) => {
        const k = s.error ?? String(s.status);
        m[k] = (m[k] ?? 0) + 1;
        return m;
      }, {}),
    )
      .map(([k, n]) => `${k}×${n}`)
      .join(' ');
  const order = /update order[^\n]*/i.exec(log)?.[0] ?? '';
  return {
    variant: LABELS[kind]!,
    requests: all.length,
    failed: failed.length,
    non2xx: non2xx.length,
    kinds: kinds([...failed, ...non2xx]),
    idle: { p50: pct(idle, 50), p99: pct(idle, 99), max: Math.max(...idle) },
    during: { p50: pct(during, 50), p99: pct(during, 99), max: Math.max(...during) },
    deployMedianMs: median(deployMs),
    servedMedianMs: median(servedMs),
    order,
  };
}

async function main() {
  buildBerth();
  const loadStart = readFileSync('/proc/loadavg', 'utf8').trim();
  const httpPort = await freePort();
  const httpsPort = await freePort();
  const berth = await startBerth(
    'deployload',
    { providers: { proxy: { caddy: { options: { serviceName: PROXY } } } } },
    { BERTH_PROXY: 'caddy', BERTH_PROXY_IMAGE: 'berth-test/caddy:1', BERTH_PROXY_HTTP_PORT: String(httpPort), BERTH_PROXY_HTTPS_PORT: String(httpsPort) },
  );
  const { environment } = await berth.call('project.create', { name: 'bench' });
  const rows = [];
  for (const v of variants) {
    const row = await variant(berth, environment.environmentId, httpPort, v);
    rows.push(row);
    console.error(`${row.variant}: ${JSON.stringify(row)} (load ${readFileSync('/proc/loadavg', 'utf8').trim()})`); // kept if a later variant fails
  }
  const loadEnd = readFileSync('/proc/loadavg', 'utf8').trim();
  const lines = [
    `Deploys under load through Caddy 2.6: ${deploys} deploys per variant, ${rate} requests/s open-loop over ${connections} keep-alive connections, the app listening ${startDelay} s after its start (node ${process.version}, ${os.cpus().length} CPUs)`,
    `/proc/loadavg at start: ${loadStart}; at end: ${loadEnd}`,
    '',
    '| variant | requests | failed | non-2xx | idle p50 / p99 / max (ms) | during deploys p50 / p99 / max (ms) | deploy median | new release served after (median) |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      r =>
        `| ${r.variant} | ${r.requests} | ${r.failed} | ${r.non2xx} | ${fmt(r.idle.p50)} / ${fmt(r.idle.p99)} / ${fmt(r.idle.max)} | ${fmt(r.during.p50)} / ${fmt(r.during.p99)} / ${fmt(r.during.max)} | ${(r.deployMedianMs / 1000).toFixed(2)} s | ${(r.servedMedianMs / 1000).toFixed(2)} s |`,
    ),
    '',
    ...rows.filter(r => r.kinds).map(r => `${r.variant}: ${r.kinds}`),
    ...rows.filter(r => r.order).map(r => `${r.variant}, deploy log: ${r.order}`),
  ];
  console.log(lines.join('\n'));
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ rows, loadStart, loadEnd, deploys, rate, connections, startDelay }, null, 2));
  await berth.stop();
}

runBench(
  'bench/deploy-load',
  main,
  async () => {
    await cleanUpBerths();
    await removeServices(services);
  },
  40 * 60_000,
);
