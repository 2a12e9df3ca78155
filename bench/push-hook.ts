#!/usr/bin/env node
// Push-to-deploy hook latency: the time of `POST /api/deploy/{refreshToken}` answering 202 with the
// deployment queued, for GitHub push events signed with the application's webhook secret (each
// with its own delivery id and commit, so every one is checked, logged and queued — a queued
// deployment superseded by the next). Berth runs as a child process started like scripts/start.sh
// (compiled build, production flags) on a PostgreSQL database the bench creates and drops, with
// its job worker off (BERTH_JOBS=false): the queued deployments are not run, so what is timed is
// the hook alone. Requests are sequential from one keep-alive client; the first --warmup are not
// counted.
//
//   node bench/push-hook.ts [--requests N] [--warmup N]
import { createHmac, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { buildBerth, cleanUpBerths, runBench, startBerth } from './util.ts';
import { githubPush } from '../plugins/deploy-hook/test/github-examples.ts';

const { values: opt } = parseArgs({ options: { requests: { type: 'string', default: '500' }, warmup: { type: 'string', default: '50' } } });
const requests = Math.max(10, Number(opt.requests));
const warmup = Math.max(0, Number(opt.warmup));

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

async function main() {
  buildBerth();
  const berth = await startBerth('push-hook', {}, { BERTH_JOBS: 'false' });
  const { environment } = await berth.call('project.create', { name: 'bench' });
  const app = await berth.call('application.create', { name: 'hooked', environmentId: environment.environmentId });
  const secret = randomBytes(20).toString('hex');
  await berth.call('application.update', { applicationId: app.applicationId, sourceType: 'git', customGitUrl: 'https://git.example.com/team/app.git', customGitBranch: 'main', webhookSecret: secret });
  const url = `${berth.url}/api/deploy/${app.refreshToken}`;

  const ms: number[] = [];
  const statuses = new Map<number, number>();
  for (let i = 0; i < warmup + requests; i++) {
    const sha = randomBytes(20).toString('hex');
    const body = JSON.stringify(githubPush({ ref: 'refs/heads/main', sha, message: `change ${i}`, files: ['src/index.js'] }));
    const headers = {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': randomBytes(8).toString('hex'),
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    };
    const t0 = performance.now();
    const res = await fetch(url, { method: 'POST', headers, body });
    await res.arrayBuffer();
    const took = performance.now() - t0;
    if (res.status !== 202) throw new Error(`the hook answered ${res.status}, not 202 (deployment queued)`);
    if (i >= warmup) {
      ms.push(took);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  }
  const deliveries = await berth.call('application.webhookDeliveries', { applicationId: app.applicationId }, 'GET');
  const fmt = (x: number) => x.toFixed(1);
  console.log('\n| signed GitHub pushes, each queued (202) | requests | p50 ms | p95 ms | p99 ms | max ms |');
  console.log('|---|---|---|---|---|---|');
  console.log(`| POST /api/deploy/{refreshToken} | ${ms.length} | ${fmt(percentile(ms, 50))} | ${fmt(percentile(ms, 95))} | ${fmt(percentile(ms, 99))} | ${fmt(Math.max(...ms))} |`);
  console.log(`\n(${Array.isArray(deliveries) ? deliveries.length : '?'} deliveries in the log; load average ${(await import('node:os')).loadavg()[0]!.toFixed(1)})`);
}

runBench('push-hook', main, cleanUpBerths, 600_000);
