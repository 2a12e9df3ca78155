#!/usr/bin/env node
// A deploy across two nodes through a registry beside a single-node deploy of the same image: two
// remote hosts of the test kit added as servers, a registry (Debian's docker-registry, TLS and
// htpasswd, as in plugins/registry/test) on this machine's address on the hosts' network, trusted
// by both. The image (berth-test/busybox:1, pushed there once) is deployed on the first server
// while it is a swarm of one (no pull check: one node), then, after cluster.joinServer made the
// second its worker, placed on the worker (node.role==worker): the pull check asks the worker's
// engine over its own connection and the worker pulls with the registry's credentials. A first
// deploy of each phase is a warm-up (the worker's pulls the image), not counted. BERTH_DEPLOY_SETTLE=0.
//
//   node bench/registry-deploy.ts [--rounds N] [--json FILE]
//
// Needs root (the kit's hosts), PostgreSQL on 127.0.0.1 (BERTH_BENCH_PG), the berth-test images and
// docker-registry (scripts/services.sh). Everything it creates is removed, also on failure.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { buildBerth, cleanUpBerths, median, runBench, secondsRow, startBerth, timeDeploy } from './util.ts';
import { inHost, loadImage, privateRemoteHosts, type RemoteHostSet } from '../test/kit/remote-hosts.ts';
import { startTlsRegistry } from '../plugins/registry/test/local-registry.ts';

const IMAGE = 'berth-test/busybox:1';
const { values: opt } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, json: { type: 'string' } } });
const rounds = Math.max(1, Number(opt.rounds));
let set: (RemoteHostSet & { down(): Promise<void> }) | undefined;
let registry: { stop(): Promise<void> } | undefined;

async function cleanUp() {
  await cleanUpBerths();
  await set?.down();
  await registry?.stop();
}

async function main() {
  buildBerth();
  set = await privateRemoteHosts(2);
  const [m, w] = set.hosts as [(typeof set.hosts)[0], (typeof set.hosts)[0]];
  const password = 'bench-' + Math.random().toString(36).slice(2);
  const reg = await startTlsRegistry(set.gateway, { pusher: password });
  registry = reg;
  for (const h of [m, w]) {
    const r = await inHost(h, ['sh', '-c', 'mkdir -p "$0" && cat > "$0/ca.crt"', `/etc/docker/certs.d/${reg.url}`], reg.ca);
    if (r.code !== 0) throw new Error(`the CA on ${h.name}: ${r.stderr}`);
  }
  await loadImage(m, IMAGE);
  const auth = { username: 'pusher', password, serveraddress: reg.url };
  const image = `${reg.url}/bench/busybox:1`;
  const engine = new Docker({ socketPath: m.socket });
  await engine.getImage(IMAGE).tag({ repo: `${reg.url}/bench/busybox`, tag: '1' });
  const pushed = await engine.getImage(image).push({ authconfig: auth });
  await new Promise((resolve, reject) => engine.modem.followProgress(pushed, (e: Error | null) => (e ? reject(e) : resolve(null))));

  const berth = await startBerth('registry', {}, { BERTH_DEPLOY_SETTLE: '0' });
  const key = await berth.call('sshKey.create', { name: 'bench hosts', privateKey: m.privateKey, publicKey: m.publicKey });
  const serverOf = async (h: typeof m) =>
    (await berth.call('server.create', { name: h.name, ipAddress: h.address, port: 22, username: 'root', sshKeyId: key.sshKeyId, hostKeyFingerprint: h.hostKeyFingerprint })).serverId as string;
  const [M, W] = [await serverOf(m), await serverOf(w)];
  const { environment } = await berth.call('project.create', { name: 'bench' });
  const deploy = async (label: string, i: number, role: string) =>
    (
      await timeDeploy(berth, {
        name: `bench-${label}-${i}`,
        environmentId: environment.environmentId,
        image,
        serverId: M,
        registry: { username: 'pusher', password, registryUrl: reg.url },
        update: { stopGracePeriodSwarm: 1_000_000_000, placementSwarm: { Constraints: [`node.role==${role}`] } },
      })
    ).ms;

  const warmOne = await deploy('one', 0, 'manager');
  const oneMs: number[] = [];
  for (let i = 1; i <= rounds; i++) oneMs.push(await deploy('one', i, 'manager'));
  await berth.call('cluster.joinServer', { serverId: W, managerServerId: M, role: 'worker' });
  const warmTwo = await deploy('two', 0, 'worker');
  const twoMs: number[] = [];
  for (let i = 1; i <= rounds; i++) twoMs.push(await deploy('two', i, 'worker'));

  const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const lines = [
    `Deploy of ${image} (from the registry, with its credentials), ${rounds} rounds each, BERTH_DEPLOY_SETTLE=0:`,
    '',
    '| deploy | median | min | max |',
    '|---|---|---|---|',
    secondsRow('single node (a server alone): application.deploy → done', oneMs),
    secondsRow('two nodes, task on the worker (pull check over its connection): application.deploy → done', twoMs),
    '',
    `Warm-up (not counted): single node ${fmt(warmOne)}, two nodes ${fmt(warmTwo)} (the worker pulls the image). Two nodes − single node: ${fmt(median(twoMs) - median(oneMs))}.`,
  ];
  console.log(lines.join('\n'));
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ oneMs, twoMs, warmOne, warmTwo, rounds }, null, 2));
  await berth.stop();
}

runBench('bench/registry-deploy', main, cleanUp, 20 * 60_000);
