#!/usr/bin/env node
// Rollback latency: the time from `rollback.rollback` to the old release answering, and to its
// deployment being done, on this machine's engine (one node). Two local images that serve
// different pages are released one after the other as an application (published on a host port),
// then each round rolls back to the other release: no fetch, no build, the kept image by id. A
// redeploy of the same image (application.deploy) is timed to done beside it as the reference (its
// page does not change, so only its end is timed).
// Berth runs as a child process started like scripts/start.sh on a database the bench creates.
//
//   node bench/rollback.ts [--rounds N] [--json FILE]
//
// Everything it creates (service, images, database, data dir) is removed, also on failure.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { buildBerth, cleanUpBerths, freePort, median, removeServices, runBench, secondsRow, startBerth, until, type Berth } from './util.ts';

const { values: opt } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, json: { type: 'string' } } });
const rounds = Math.max(1, Number(opt.rounds));
const docker = new Docker();
const suffix = randomBytes(3).toString('hex');
const repo = `berth-bench/rollback-${suffix}`;
const appName = `bench-rollback-${suffix}`;
const images: string[] = [];

async function cleanUp() {
  await cleanUpBerths();
  await removeServices([appName]);
  for (const ref of [`${repo}:one`, `${repo}:two`, ...images])
    await docker
      .getImage(ref)
      .remove({ force: true })
      .catch(() => undefined);
}

/** A local image FROM the static site image that serves `text` (committed from a container that wrote it). */
async function siteImage(tag: string, text: string): Promise<string> {
  const base = 'berth-test/static-httpd:2';
  const c = await docker.createContainer({ Image: base, Cmd: ['sh', '-c', `echo ${text} > /www/index.html`] });
  await c.start();
  await c.wait();
  const { Config } = await docker.getImage(base).inspect();
  const { Id } = (await c.commit({ repo, tag, changes: [`CMD ${JSON.stringify(Config.Cmd)}`] } as never)) as unknown as { Id: string };
  await c.remove();
  images.push(Id);
  return Id;
}

const page = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) }).catch(() => null);
  return res?.ok ? (await res.text()).trim() : '';
};

/** Queues a run (its reply names the deployment in a header); answers ms to `text` served and ms to done. */
async function timed(berth: Berth, op: string, input: Record<string, unknown>, port: number, text: string) {
  const t0 = performance.now();
  const res = await berth.send(op, input);
  if (!res.ok) throw new Error(`${op}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  const deploymentId = res.headers.get('x-berth-deployment-id')!;
  let servedMs = 0;
  const end = await until(`${op} to finish`, async () => {
    if (!servedMs && (await page(port)) === text) servedMs = performance.now() - t0;
    const d = await berth.call('deployment.one', { deploymentId }, 'GET');
    return ['done', 'error', 'cancelled'].includes(d.state) ? d : undefined;
  });
  if (end.state !== 'done') throw new Error(`${op} ended ${end.state}: ${end.errorMessage}`);
  const doneMs = performance.now() - t0;
  if (!servedMs) servedMs = await until(`${text} served`, async () => ((await page(port)) === text ? performance.now() - t0 : undefined));
  return { servedMs, doneMs };
}

async function main() {
  buildBerth();
  await siteImage('one', 'release-one');
  await siteImage('two', 'release-two');
  const berth = await startBerth('rollback', {});
  const { environment } = await berth.call('project.create', { name: 'bench' });
  const app = await berth.call('application.create', { name: 'rollback', appName, environmentId: environment.environmentId });
  const port = await freePort();
  // busybox httpd stops on TERM at once (the image traps it): 1 s of grace is plenty.
  await berth.call('application.update', { applicationId: app.applicationId, stopGracePeriodSwarm: 1_000_000_000 });
  await berth.call('port.create', { applicationId: app.applicationId, publishedPort: port, targetPort: 80, publishMode: 'host', protocol: 'tcp' });

  const release = async (tag: string, text: string) => {
    await berth.call('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: `${repo}:${tag}` });
    return timed(berth, 'application.deploy', { applicationId: app.applicationId }, port, text);
  };
  await release('one', 'release-one');
  const redeploy = [await release('two', 'release-two')];
  const list = await berth.call('deployment.allByType', { id: app.applicationId, type: 'application' }, 'GET');
  const [two, one] = (list as { rollback: { rollbackId: string } | null }[]).filter(d => d.rollback).map(d => d.rollback!.rollbackId);

  const rollbacks: { servedMs: number; doneMs: number }[] = [];
  for (let i = 0; i < rounds; i++) {
    rollbacks.push(await timed(berth, 'rollback.rollback', { rollbackId: one }, port, 'release-one'));
    rollbacks.push(await timed(berth, 'rollback.rollback', { rollbackId: two }, port, 'release-two'));
    redeploy.push(await timed(berth, 'application.deploy', { applicationId: app.applicationId }, port, 'release-two'));
  }

  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const lines = [
    `Rollback on one node (${rollbacks.length} rollbacks, ${redeploy.length} redeploys; stop-first: the port is published in host mode; load average ${load}):`,
    '',
    '| path | median | min | max |',
    '|---|---|---|---|',
    secondsRow(
      'rollback.rollback → the old release answers',
      rollbacks.map(r => r.servedMs),
    ),
    secondsRow(
      'rollback.rollback → deployment done',
      rollbacks.map(r => r.doneMs),
    ),
    secondsRow(
      'application.deploy (same image, no build) → done',
      redeploy.map(r => r.doneMs),
    ),
    '',
    `Aim: the old release answers under 5 s → ${median(rollbacks.map(r => r.servedMs)) < 5000 ? 'met' : 'MISSED'}`,
  ];
  console.log(lines.join('\n'));
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ rollbacks, redeploy }, null, 2));
  await berth.stop();
}

runBench('bench/rollback', main, cleanUp, 15 * 60_000);
