#!/usr/bin/env node
// Push-to-deploy hook latency: the time of a signed GitHub push answered 202 with the deployment
// queued, on both of GitHub's hooks: `POST /api/deploy/{refreshToken}` (signed with the
// application's webhook secret) and `POST /api/deploy/github` (a GitHub App's delivery, signed with
// the App's webhook secret, for the repository one application deploys through that connection;
// the connection is made by the manifest flow against the tests' GitHub stand-in on loopback).
// Each push has its own delivery id and commit, so every one is checked, logged and queued (a
// queued deployment superseded by the next); the payload is @octokit/webhooks-examples' push.
// Berth runs as a child process started like scripts/start.sh (compiled build, production flags)
// on a PostgreSQL database the bench creates and drops, with its job worker off (BERTH_JOBS=false):
// the queued deployments are not run, so what is timed is the hook alone. Requests are sequential
// from one keep-alive client, one hook after the other; the first --warmup of each are not counted.
//
//   node bench/push-hook.ts [--requests N] [--warmup N]
import { createHmac, generateKeyPairSync, randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { Test } from 'tap';
import { buildBerth, cleanUpBerths, runBench, startBerth, type Berth } from './util.ts';
import { githubPush } from '../plugins/deploy-hook/test/github-examples.ts';
import { startFakeGithub } from '../providers/git-github/test/github-api.ts';

const { values: opt } = parseArgs({ options: { requests: { type: 'string', default: '500' }, warmup: { type: 'string', default: '50' } } });
const requests = Math.max(10, Number(opt.requests));
const warmup = Math.max(0, Number(opt.warmup));
const INSTALLATION = 77;
const closers: (() => unknown)[] = [];

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

/** The latencies of `warmup + requests` signed pushes of fresh commits to `url`, the warmup's left out; each must be answered 202. */
async function measure(url: string, secret: string, fill: { repository?: string; installationId?: number }): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < warmup + requests; i++) {
    const body = JSON.stringify(githubPush({ ref: 'refs/heads/main', sha: randomBytes(20).toString('hex'), message: `change ${i}`, files: ['src/index.js'], ...fill }));
    const headers = {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': randomBytes(8).toString('hex'),
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    };
    const t0 = performance.now();
    const res = await fetch(url, { method: 'POST', headers, body });
    const answer = await res.text();
    const took = performance.now() - t0;
    if (res.status !== 202) throw new Error(`${url} answered ${res.status}, not 202 (deployment queued): ${answer.slice(0, 300)}`);
    if (i >= warmup) ms.push(took);
  }
  return ms;
}

/** A GitHub App connection made as a user makes it (github.setupState, then GitHub's redirect to the setup route), installed; its id and webhook secret. */
async function githubApp(berth: Berth): Promise<{ githubId: string; secret: string }> {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs1', format: 'pem' } });
  // cast: the stand-in takes a tap Test for its clean-up only (teardown); the bench runs them itself
  const t = { teardown: (fn: () => unknown) => closers.push(fn) } as unknown as Test;
  const github = await startFakeGithub(t, { publicKeyPem: keys.publicKey, privateKeyPem: keys.privateKey, appId: '4242', installationId: INSTALLATION });
  const { state } = await berth.call('github.setupState', { githubUrl: github.url });
  const query = new URLSearchParams({ code: github.manifestCode(), state, installation_id: String(INSTALLATION) });
  const res = await fetch(`${berth.url}/api/providers/github/setup?${query}`, { headers: { 'x-api-key': berth.apiKey }, redirect: 'manual' });
  const githubId = new URL(res.headers.get('location') ?? '/', berth.url).searchParams.get('githubId');
  if (res.status !== 307 || !githubId) throw new Error(`the GitHub App setup answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  // The stand-in's manifest conversion gives the App this webhook secret.
  return { githubId, secret: 'manifest-webhook-secret' };
}

async function main() {
  buildBerth();
  const berth = await startBerth('push-hook', {}, { BERTH_JOBS: 'false' });
  const { environment } = await berth.call('project.create', { name: 'bench' });
  const environmentId = environment.environmentId;

  const hooked = await berth.call('application.create', { name: 'hooked', environmentId });
  const secret = randomBytes(20).toString('hex');
  await berth.call('application.update', {
    applicationId: hooked.applicationId,
    sourceType: 'git',
    customGitUrl: 'https://git.example.com/team/app.git',
    customGitBranch: 'main',
    webhookSecret: secret,
  });

  const app = await githubApp(berth);
  const linked = await berth.call('application.create', { name: 'linked', environmentId });
  await berth.call('application.saveGithubProvider', { applicationId: linked.applicationId, githubId: app.githubId, owner: 'team', repository: 'app', branch: 'main', buildPath: '/' });

  const rows = [
    { hook: 'POST /api/deploy/{refreshToken}', applicationId: hooked.applicationId, ms: await measure(`${berth.url}/api/deploy/${hooked.refreshToken}`, secret, {}) },
    {
      hook: 'POST /api/deploy/github (GitHub App)',
      applicationId: linked.applicationId,
      ms: await measure(`${berth.url}/api/deploy/github`, app.secret, { repository: 'team/app', installationId: INSTALLATION }),
    },
  ];
  const fmt = (x: number) => x.toFixed(1);
  console.log('\n| signed GitHub pushes, each queued (202) | requests | p50 ms | p95 ms | p99 ms | max ms | deliveries logged |');
  console.log('|---|---|---|---|---|---|---|');
  for (const { hook, applicationId, ms } of rows) {
    const deliveries = await berth.call('application.webhookDeliveries', { applicationId }, 'GET');
    console.log(
      `| ${hook} | ${ms.length} | ${fmt(percentile(ms, 50))} | ${fmt(percentile(ms, 95))} | ${fmt(percentile(ms, 99))} | ${fmt(Math.max(...ms))} | ${Array.isArray(deliveries) ? deliveries.length : '?'} |`,
    );
  }
  console.log(`\n(load average ${loadavg()[0]!.toFixed(1)})`);
}

runBench(
  'push-hook',
  main,
  async () => {
    await cleanUpBerths();
    for (const close of closers.reverse()) await close();
  },
  600_000,
);
