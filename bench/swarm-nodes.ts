#!/usr/bin/env node
// Swarm nodes: the time of `cluster.joinServer` (a server joined to another server's swarm as a
// worker, over its own SSH connection) and of `cluster.removeWorker` draining ten tasks (the call
// until the answer: drained, each task running on the other node, the worker gone from the swarm).
// Two remote hosts of the test kit (network namespaces with their own dockerd and sshd): the first
// is the manager, the second joins it; a service of 20 replicas is spread over both (10 on the
// worker), then the worker is removed. Each round joins again. Berth runs as a child process started
// like scripts/start.sh (compiled build, production flags) on a PostgreSQL database the bench
// creates and drops.
//
//   node bench/swarm-nodes.ts [--rounds N] [--json FILE]
//
// Needs root (the kit's hosts), PostgreSQL on 127.0.0.1 (BERTH_BENCH_PG), the berth-test images.
// Everything it creates (services, database, data dir, the hosts) is removed, also on failure.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { buildBerth, cleanUpBerths, runBench, secondsRow, startBerth, until } from './util.ts';
import { inHost, loadImage, privateRemoteHosts, type RemoteHostSet } from '../test/kit/remote-hosts.ts';

const IMAGE = 'berth-test/busybox:1';
const REPLICAS = 20;
const { values: opt } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, json: { type: 'string' } } });
const rounds = Math.max(1, Number(opt.rounds));
let set: (RemoteHostSet & { down(): Promise<void> }) | undefined;

async function cleanUp() {
  await cleanUpBerths();
  await set?.down();
}

interface Task {
  NodeID?: string;
  Status?: { State?: string };
}

async function main() {
  buildBerth();
  set = await privateRemoteHosts(2);
  const [a, b] = set.hosts as [(typeof set.hosts)[0], (typeof set.hosts)[0]];
  await Promise.all([a, b].map(h => loadImage(h, IMAGE)));
  const manager = new Docker({ socketPath: a.socket });
  const berth = await startBerth('swarm-nodes', {}, {});
  const key = await berth.call('sshKey.create', { name: 'bench hosts', privateKey: a.privateKey, publicKey: a.publicKey });
  const serverOf = async (h: typeof a) =>
    (await berth.call('server.create', { name: h.name, ipAddress: h.address, port: 22, username: h.user, sshKeyId: key.sshKeyId, hostKeyFingerprint: h.hostKeyFingerprint })).serverId as string;
  const [A, B] = [await serverOf(a), await serverOf(b)];
  // The manager's engine made a swarm manager by Berth (its first use prepares it).
  await berth.call('swarm.getNodes', { serverId: A }, 'GET').catch(() => undefined);
  await berth.call('cluster.addWorker', { serverId: A }, 'GET');

  const joinMs: number[] = [];
  const drainMs: number[] = [];
  const movedCounts: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    let t0 = performance.now();
    const joined = await berth.call('cluster.joinServer', { serverId: B, managerServerId: A, role: 'worker' });
    joinMs.push(performance.now() - t0);
    const name = `bench-drain-${round}`;
    const service = (await manager.createService({
      Name: name,
      TaskTemplate: { ContainerSpec: { Image: IMAGE, Command: ['sleep', '3600'], Init: true, StopGracePeriod: 1_000_000_000 } },
      Mode: { Replicated: { Replicas: REPLICAS } },
    } as never)) as { id: string }; // cast: dockerode's CreateServiceOptions lacks ContainerSpec.Init
    const onWorker = await until(
      `${REPLICAS} tasks running, some on the worker`,
      async () => {
        const tasks = (await manager.listTasks({ filters: { service: [name], 'desired-state': ['running'] } })) as Task[];
        const running = tasks.filter(t => t.Status?.State === 'running');
        return running.length === REPLICAS ? running.filter(t => t.NodeID === joined.nodeId).length : undefined;
      },
      180_000,
    );
    t0 = performance.now();
    const removed = await berth.call('cluster.removeWorker', { serverId: A, nodeId: joined.nodeId });
    drainMs.push(performance.now() - t0);
    movedCounts.push(removed.moved.length);
    if (removed.moved.length !== onWorker) throw new Error(`round ${round}: ${onWorker} tasks ran on the worker, ${removed.moved.length} moved`);
    await manager.getService(service.id).remove();
    await until('the service gone from the worker', async () => ((await inHost(b, ['docker', 'ps', '-q'])).stdout.trim() ? undefined : true), 60_000);
  }

  const lines = [
    `Swarm nodes on two remote hosts of the test kit, ${rounds} rounds:`,
    '',
    '| operation | median | min | max |',
    '|---|---|---|---|',
    secondsRow('cluster.joinServer (a server joins as a worker, over SSH; the token rotated)', joinMs),
    secondsRow(`cluster.removeWorker (drain, ${movedCounts.join('/')} tasks moved, node removed, its engine leaves)`, drainMs),
  ];
  console.log(lines.join('\n'));
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ joinMs, drainMs, movedCounts, rounds }, null, 2));
  await berth.stop();
}

runBench('bench/swarm-nodes', main, cleanUp, 20 * 60_000);
