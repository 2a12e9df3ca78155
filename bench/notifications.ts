#!/usr/bin/env node
// What the notification plugin costs: its idle footprint, and what channels that are down do to
// a deploy. Berth runs as a child process started like scripts/start.sh (compiled build, production
// flags), each start on a fresh PostgreSQL database the bench creates and drops.
//
//   node bench/notifications.ts [--rounds N] [--idle S] [--only footprint|deploys|latency] [--json FILE]
//
// Footprint (bench/plugin-footprint.ts's measure): N rounds, each starting Berth three ways in turn
// (the order rotates per round): without the notification plugin and the notify providers
// (BERTH_PLUGINS = every other built-in, every providers.notify.<id> false); with them; with them
// and one channel of each of the twelve kinds created through the API. Each is read after --idle seconds (default 10) of idleness:
// VmRSS and RssAnon of /proc/<pid>/status. The table gives the medians; the issue's aim is
// with − without ≤ 2 MB.
//
// Deploys with every sink down: one Berth; N rounds, each deploying a new application twice
// (prebuilt local image, BERTH_DEPLOY_SETTLE=0): once with no channel, once with twelve channels
// (every toggle on) whose endpoints are all down — the HTTP ones at a loopback server that accepts
// and never answers, email at a TCP port that never greets; Telegram, Pushover and Resend through
// their apiUrl. Each send of those hangs until notifyTimeoutSeconds (10 s). The time is
// application.deploy → deployment.one `done`. The order within a round alternates; the channels
// are removed after their deploy (their deliveries with them); a first round warms up uncounted.
// The table gives the medians; the
// aim is that they are the same (the deploy writes its delivery rows and never waits for a send).
//
// Latency: a Slack, a Discord, an email (a real SMTP server on loopback) and a custom-webhook
// channel; N rounds of a successful deploy, a failed build (an image that does not exist) and a
// failed backup of Berth's own data (a destination nobody listens on): the time from the end the
// bench sees (the deployment's end, the backup call's start) to each channel's message. Aim: 5 s.
//
// Needs PostgreSQL on 127.0.0.1 (BERTH_BENCH_PG, trust auth) and the Docker engine in swarm mode
// with the berth-test images. Everything it creates is removed, also on failure.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { buildBerth, cleanUpBerths, freePort, median, runBench, startBerth, until, type Berth } from './util.ts';
import { pluginFootprint } from './plugin-footprint.ts';

const IMAGE = 'berth-test/busybox:1';
const { values: opt } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, idle: { type: 'string', default: '10' }, only: { type: 'string' }, json: { type: 'string' } } });
const rounds = Math.max(1, Number(opt.rounds));
const idleMs = Number(opt.idle) * 1000;
const docker = new Docker();
const suffix = randomBytes(3).toString('hex');
const allOn = {
  appDeploy: true,
  appBuildError: true,
  databaseBackup: true,
  volumeBackup: true,
  dokployBackup: true,
  dokployRestart: true,
  dockerCleanup: true,
  serverThreshold: true,
  appHealth: true,
};

const services: string[] = [];
const servers: (http.Server | net.Server)[] = [];

async function cleanUp() {
  for (const s of services)
    await docker
      .getService(s)
      .remove()
      .catch(() => undefined);
  for (const s of servers) {
    if (s instanceof http.Server) s.closeAllConnections();
    s.close();
  }
  await cleanUpBerths();
}

/** Every channel kind's create body, its endpoints at `http` (HTTP) and `smtpPort` (email). */
function channelBodies(httpUrl: string, smtpPort: number): [string, Record<string, unknown>][] {
  return [
    ['Slack', { webhookUrl: `${httpUrl}/slack/T0/B0/k`, channel: '#ops' }],
    ['Discord', { webhookUrl: `${httpUrl}/discord/api/webhooks/1/k`, decoration: true }],
    ['Telegram', { botToken: '123:k', chatId: '-100' }],
    ['Email', { smtpServer: '127.0.0.1', smtpPort, username: 'berth', password: 'mail-secret', fromAddress: 'berth@example.com', toAddresses: ['ops@example.com'], tlsMode: 'none' }],
    ['Resend', { apiKey: 're_k', fromAddress: 'berth@example.com', toAddresses: ['ops@example.com'] }],
    ['Gotify', { serverUrl: `${httpUrl}/gotify`, appToken: 'k', priority: 5, decoration: false }],
    ['Ntfy', { serverUrl: `${httpUrl}/ntfy`, topic: 'berth', priority: 3 }],
    ['Mattermost', { webhookUrl: `${httpUrl}/mattermost/hooks/k` }],
    ['Custom', { endpoint: `${httpUrl}/custom/in` }],
    ['Lark', { webhookUrl: `${httpUrl}/lark/hook/k` }],
    ['Teams', { webhookUrl: `${httpUrl}/teams/invoke?sig=k` }],
    ['Pushover', { userKey: 'user-k', apiToken: 'app-k', priority: 0 }],
  ];
}
const apiUrls = (httpUrl: string) => Object.fromEntries(['telegram', 'pushover', 'resend'].map(id => [id, { options: { apiUrl: `${httpUrl}/${id}` } }]));

/** A loopback HTTP server that accepts every request and never answers; a TCP server that never speaks (SMTP). Counts connections. */
async function deadSinks() {
  let connections = 0;
  const hang = http.createServer(() => {});
  hang.on('connection', () => void connections++);
  const silent = net.createServer(() => void connections++);
  servers.push(hang, silent);
  await new Promise<void>(r => hang.listen(0, '127.0.0.1', r));
  await new Promise<void>(r => silent.listen(0, '127.0.0.1', r));
  return { httpUrl: `http://127.0.0.1:${(hang.address() as net.AddressInfo).port}`, smtpPort: (silent.address() as net.AddressInfo).port, connections: () => connections };
}

async function footprint() {
  const { httpUrl, smtpPort } = await deadSinks();
  // Toggles off: nothing is sent while idle (the start's own event would otherwise hang at the sinks).
  const createChannels = async (berth: Berth) => {
    for (const [suffixOf, settings] of channelBodies(httpUrl, smtpPort))
      await berth.call(`notification.create${suffixOf}`, { name: suffixOf, ...Object.fromEntries(Object.keys(allOn).map(k => [k, false])), ...settings });
  };
  const { lines, readings } = await pluginFootprint(['notification'], {
    rounds,
    idleMs,
    config: { providers: { notify: apiUrls(httpUrl) } },
    extra: [{ label: 'with notification, 12 channels (one per kind)', setup: createChannels }],
  });
  console.log(lines.join('\n'));
  return readings;
}

async function deploys() {
  const sinks = await deadSinks();
  const berth = await startBerth('deploys', { providers: { notify: apiUrls(sinks.httpUrl) } }, { BERTH_DEPLOY_SETTLE: '0' });
  const { environment } = await berth.call('project.create', { name: 'bench' });
  let n = 0;
  const deploy = async () => {
    const app = await berth.call('application.create', { name: `bench-${n}`, appName: `bench-notify-${suffix}-${n++}`, environmentId: environment.environmentId });
    services.push(app.appName);
    await berth.call('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: IMAGE });
    await berth.call('application.update', { applicationId: app.applicationId, command: 'sleep', args: ['3600'] });
    const t0 = performance.now();
    const deploymentId = (await berth.send('application.deploy', { applicationId: app.applicationId })).headers.get('x-berth-deployment-id')!;
    const end = await until('the deployment', async () => {
      const d = await berth.call('deployment.one', { deploymentId }, 'GET');
      return ['done', 'error', 'cancelled'].includes(d.state) ? d : undefined;
    });
    if (end.state !== 'done') throw new Error(`deployment ended ${end.state}: ${end.errorMessage}`);
    return performance.now() - t0;
  };
  const none: number[] = [];
  const down: number[] = [];
  // Round 0 warms up, uncounted: the first deploy of a process pays for loading code, the first
  // sends for loading the channels' SDKs (nodemailer, resend).
  for (let i = 0; i <= rounds; i++) {
    if (i === 1) none.length = down.length = 0;
    for (const which of i % 2 ? ['down', 'none'] : ['none', 'down']) {
      if (which === 'none') {
        none.push(await deploy());
        continue;
      }
      const ids: string[] = [];
      for (const [suffixOf, settings] of channelBodies(sinks.httpUrl, sinks.smtpPort))
        ids.push((await berth.call(`notification.create${suffixOf}`, { name: suffixOf, ...allOn, ...settings })).notificationId);
      down.push(await deploy());
      for (const notificationId of ids) await berth.call('notification.remove', { notificationId });
    }
    console.error(`deploy round ${i}/${rounds}${i ? '' : ' (warm-up)'}: none ${(none.at(-1)! / 1000).toFixed(2)} s, every sink down ${(down.at(-1)! / 1000).toFixed(2)} s`);
  }
  await berth.stop();
  const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const row = (label: string, xs: number[]) => `| ${label} | ${fmt(median(xs))} | ${fmt(Math.min(...xs))} | ${fmt(Math.max(...xs))} |`;
  const lines = [
    `Deploy of a prebuilt local image (${IMAGE}, BERTH_DEPLOY_SETTLE=0), ${rounds} rounds, application.deploy → done:`,
    '',
    '| channels | median | min | max |',
    '|---|---|---|---|',
    row('none', none),
    row('12, every endpoint down (sends hang until the 10 s timeout)', down),
    '',
    `Difference of the medians: ${fmt(median(down) - median(none))}; connections the dead sinks accepted: ${sinks.connections()} (the sends were tried).`,
  ];
  console.log(lines.join('\n'));
  return { none, down };
}

/** A recording loopback HTTP server that answers 200 (every channel's success). */
async function liveSink() {
  const requests: { path: string; body: string }[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', c => parts.push(c as Buffer));
    req.on('end', () => {
      requests.push({ path: req.url ?? '', body: Buffer.concat(parts).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true,"status":1,"code":0}');
    });
  });
  servers.push(server);
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, requests };
}

/**
 * How soon a Slack, a Discord, an email and a custom-webhook channel hear a successful deploy, a
 * failed build and a backup result: from the moment the bench sees the deployment end (the backup
 * call return) to the moment each channel's message arrived, polled every 25 ms.
 */
async function latency() {
  const { startSmtp, makeCertificate } = await import('@berth/core/testing');
  const teardowns: (() => unknown)[] = [];
  const fakeTest = { teardown: (fn: () => unknown) => void teardowns.push(fn) } as never;
  const smtp = await startSmtp(fakeTest, makeCertificate(fakeTest), 'none');
  const sink = await liveSink();
  try {
    const berth = await startBerth('latency', {}, { BERTH_DEPLOY_SETTLE: '0', BERTH_BACKUP_PASSPHRASE: 'bench-passphrase-0123456789' });
    const toggles = { ...Object.fromEntries(Object.keys(allOn).map(k => [k, false])), appDeploy: true, appBuildError: true, databaseBackup: true, dokployBackup: true };
    const bodies = new Map(channelBodies(sink.url, smtp.port));
    for (const kind of ['Slack', 'Discord', 'Email', 'Custom'])
      await berth.call(`notification.create${kind}`, { name: kind, ...toggles, ...bodies.get(kind), ...(kind === 'Email' ? { smtpPort: smtp.port } : {}) });
    const arrived: Record<string, (marker: string) => boolean> = {
      slack: m => sink.requests.some(r => r.path.startsWith('/slack/') && r.body.includes(m)),
      discord: m => sink.requests.some(r => r.path.startsWith('/discord/') && r.body.includes(m)),
      email: m => smtp.mails.some(mail => mail.replace(/=\r?\n/g, '').includes(m)),
      custom: m => sink.requests.some(r => r.path.startsWith('/custom/') && r.body.includes(m)),
    };
    const timings: Record<string, Record<string, number[]>> = {};
    const measure = async (event: string, marker: string, t0: number) => {
      for (const [channel, seen] of Object.entries(arrived)) {
        await until(`${event} at ${channel}`, async () => (seen(marker) ? true : undefined), 60_000);
        ((timings[event] ??= {})[channel] ??= []).push(performance.now() - t0);
      }
    };
    const { environment } = await berth.call('project.create', { name: 'latency' });
    const deployApp = async (name: string, image: string) => {
      const app = await berth.call('application.create', { name, appName: `bench-notify-${suffix}-${name}`, environmentId: environment.environmentId });
      services.push(app.appName);
      await berth.call('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: image });
      await berth.call('application.update', { applicationId: app.applicationId, command: 'sleep', args: ['3600'] });
      const deploymentId = (await berth.send('application.deploy', { applicationId: app.applicationId })).headers.get('x-berth-deployment-id')!;
      await until('the deployment', async () => (['done', 'error', 'cancelled'].includes((await berth.call('deployment.one', { deploymentId }, 'GET')).state) ? true : undefined));
      return { t0: performance.now(), marker: app.appName };
    };
    // A destination nobody listens on: the own-data backup fails at once, and says so.
    const closed = await freePort();
    const dest = await berth.call('destination.create', {
      name: 'down',
      provider: 'Minio',
      endpoint: `http://127.0.0.1:${closed}`,
      region: 'us-east-1',
      bucket: 'b',
      accessKey: 'k',
      secretAccessKey: 'secret-key',
      additionalFlags: [],
    });
    for (let i = 0; i < rounds; i++) {
      const ok = await deployApp(`ok-${i}`, IMAGE);
      await measure('appDeploy (a successful deploy)', ok.marker, ok.t0);
      const failed = await deployApp(`broken-${i}`, `berth-test/does-not-exist-${suffix}:${i}`);
      await measure('appBuildError (a failed build)', failed.marker, failed.t0);
      const backup = await berth.call('backup.create', {
        schedule: '0 3 * * *',
        prefix: `p${i}`,
        destinationId: dest.destinationId,
        database: 'berth',
        databaseType: 'web-server',
        keepLatestCount: 1,
      });
      const t0 = performance.now();
      await berth.send('backup.manualBackupWebServer', { backupId: backup.backupId });
      await measure("ownDataBackup (a failed backup of Berth's data)", `p${i}/`, t0);
      console.error(`latency round ${i + 1}/${rounds} measured`);
    }
    await berth.stop();
    const channels = Object.keys(arrived);
    const lines = [
      `Delivery latency, medians of ${rounds} rounds (from the deployment's end or the backup call's start to the message's arrival):`,
      '',
      `| event | ${channels.join(' | ')} |`,
      `|---|${channels.map(() => '---').join('|')}|`,
      ...Object.entries(timings).map(([event, by]) => `| ${event} | ${channels.map(c => `${(median(by[c]!) / 1000).toFixed(2)} s`).join(' | ')} |`),
      '',
      `Aim: within 5 s → ${Object.values(timings).every(by => Object.values(by).every(xs => median(xs) <= 5000)) ? 'met' : 'MISSED'} (slowest single arrival ${(Math.max(...Object.values(timings).flatMap(by => Object.values(by).flat())) / 1000).toFixed(2)} s)`,
    ];
    console.log(lines.join('\n'));
    return timings;
  } finally {
    for (const fn of teardowns.reverse()) await fn();
  }
}

async function main() {
  buildBerth();
  const out: Record<string, unknown> = { loadavg: os.loadavg() };
  if (!opt.only || opt.only === 'footprint') out.footprint = await footprint();
  if (!opt.only || opt.only === 'deploys') out.deploys = await deploys();
  if (!opt.only || opt.only === 'latency') out.latency = await latency();
  console.log(
    `\nLoad average (1, 5, 15 min) at the start: ${(out.loadavg as number[]).map(x => x.toFixed(2)).join(', ')}; at the end: ${os
      .loadavg()
      .map(x => x.toFixed(2))
      .join(', ')}`,
  );
  if (opt.json) writeFileSync(opt.json, JSON.stringify(out, null, 2));
}

runBench('bench/notifications', main, cleanUp, 40 * 60_000);
