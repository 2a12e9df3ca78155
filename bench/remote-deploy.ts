#!/usr/bin/env node
// Remote deploy latency: the time from `application.deploy` to `done` of a prebuilt image on the
// engine of this machine and on a server (a remote host of the test kit, reached over the pooled
// SSH connection), the image already present on both. Berth runs as a child process started like
// scripts/start.sh (compiled build, production flags) on a PostgreSQL database the bench creates
// and drops, with BERTH_DEPLOY_SETTLE=0 (done once the task runs: the settle wait would be the same
// on both). A first round on each engine warms up (it copies the image to the server, connects and
// prepares the engine) and is not counted; rounds alternate local and remote.
//
//   node bench/remote-deploy.ts [--rounds N] [--json FILE]
//
// Needs root (the kit's host), PostgreSQL on 127.0.0.1 (BERTH_BENCH_PG), the berth-test images.
// Everything it creates (services, database, data dir, the remote host) is removed, also on failure.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { buildBerth, cleanUpBerths, median, removeServices, runBench, secondsRow, startBerth, timeDeploy } from './util.ts';
import { privateRemoteHosts, type RemoteHostSet } from '../test/kit/remote-hosts.ts';

const IMAGE = 'berth-test/busybox:1';
const { values: opt } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, json: { type: 'string' } } });
const rounds = Math.max(1, Number(opt.rounds));
const services: string[] = [];
let set: (RemoteHostSet & { down(): Promise<void> }) | undefined;

async function cleanUp() {
  await cleanUpBerths();
  await removeServices(services);
  await set?.down();
}

async function main() {
  buildBerth();
  set = await privateRemoteHosts(1);
  const host = set.hosts[0]!;
  const berth = await startBerth('remote', {}, { BERTH_DEPLOY_SETTLE: '0' });
  const key = await berth.call('sshKey.create', { name: 'bench host', privateKey: host.privateKey, publicKey: host.publicKey });
  const server = await berth.call('server.create', { name: 'bench host', ipAddress: host.address, port: 22, username: host.user, sshKeyId: key.sshKeyId, hostKeyFingerprint: host.hostKeyFingerprint });
  const { environment } = await berth.call('project.create', { name: 'bench' });

  /** One deploy of a new application (on the server, or here): call → done, in ms. */
  const deploy = async (i: number, serverId: string | null) => {
    const { appName, ms } = await timeDeploy(berth, {
      name: `bench-${serverId ? 'remote' : 'local'}-${i}`,
      environmentId: environment.environmentId,
      image: IMAGE,
      ...(serverId ? { serverId } : {}),
      update: { stopGracePeriodSwarm: 1_000_000_000 },
    });
    if (!serverId) services.push(appName);
    return ms;
  };
  const warmLocal = await deploy(0, null);
  const warmRemote = await deploy(0, server.serverId);
  const localMs: number[] = [];
  const remoteMs: number[] = [];
  for (let i = 1; i <= rounds; i++) {
    if (i % 2) {
      localMs.push(await deploy(i, null));
      remoteMs.push(await deploy(i, server.serverId));
    } else {
      remoteMs.push(await deploy(i, server.serverId));
      localMs.push(await deploy(i, null));
    }
  }

  const l = median(localMs) / 1000;
  const r = median(remoteMs) / 1000;
  const fmt = (s: number) => `${s.toFixed(2)} s`;
  const lines = [
    `Deploy of a prebuilt image (${IMAGE}, already on both engines), ${rounds} rounds each, BERTH_DEPLOY_SETTLE=0:`,
    '',
    '| engine | median | min | max |',
    '|---|---|---|---|',
    secondsRow('this machine: application.deploy → done', localMs),
    secondsRow('a server over SSH: application.deploy → done', remoteMs),
    '',
    `Warm-up (not counted): local ${fmt(warmLocal / 1000)}, remote ${fmt(warmRemote / 1000)} (connects, prepares the engine, copies the image).`,
    `Aim: remote ≤ local + 0.3 s = ${fmt(l + 0.3)} → ${r <= l + 0.3 ? 'met' : 'MISSED'} (remote − local = ${fmt(r - l)})`,
  ];
  console.log(lines.join('\n'));
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ localMs, remoteMs, warmLocal, warmRemote, rounds }, null, 2));
  // Berth removes what it deployed on the server before the host goes.
  await berth.stop();
}

runBench('bench/remote-deploy', main, cleanUp, 20 * 60_000);
