// A server's figures are read on that server: a kit host (its own network and mount namespaces,
// reached over SSH) set up with server.setupMonitoring, sampled by the collector, and checked on
// what differs from this machine — its eth0 counters (a known number of bytes sent to its address
// shows in its receive counter, which lies between two readings of its /proc/net/dev taken around
// the sample inside the namespace) and the filesystem of its engine's data-root against df inside
// the host — through server.getServerMetrics and GET /metrics (label server="<serverId>").
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync } from 'node:fs';
import t from 'tap';
import { canRun, signUpAdmin, startTestServer } from '@berth/core/testing';
import { inHost, remoteHostsMissing, sharedRemoteHosts } from '@berth/test/remote-hosts';

t.setTimeout(300_000);

/** The receive and transmit bytes of one interface in a /proc/net/dev text. */
function counters(netDev: string, device: string): { rx: number; tx: number } {
  const line = netDev.split('\n').find(l => l.trim().startsWith(`${device}:`));
  if (!line) throw new Error(`no ${device} in /proc/net/dev`);
  const f = line.split(':')[1]!.trim().split(/\s+/).map(Number);
  return { rx: f[0]!, tx: f[8]! };
}

/** Sends `count` UDP datagrams of `size` bytes to address:port; answers the payload bytes sent. */
async function blast(address: string, port: number, count: number, size: number): Promise<number> {
  const socket = createSocket('udp4');
  const payload = Buffer.alloc(size, 7);
  for (let i = 0; i < count; i++) await new Promise<void>((resolve, reject) => socket.send(payload, port, address, e => (e ? reject(e) : resolve())));
  await new Promise<void>(r => socket.close(() => r()));
  return count * size;
}

if (canRun(t, 'remote-hosts', remoteHostsMissing())) {
  const set = await sharedRemoteHosts(8);
  const h = set.hosts[0]!;
  const server = await startTestServer({ proxy: 'none', jobs: false });
  t.teardown(() => server.destroy());
  const { client, apiKey } = await signUpAdmin(server);
  const key = await client.post('sshKey.create', { name: 'kit host', privateKey: h.privateKey, publicKey: h.publicKey });
  const added = await client.post('server.create', { name: 'kit host', ipAddress: h.address, port: 22, username: h.user, sshKeyId: key.body.sshKeyId, hostKeyFingerprint: h.hostKeyFingerprint });
  if (added.status !== 200) throw new Error(`server.create: ${added.status} ${JSON.stringify(added.body)}`);
  const serverId = added.body.serverId as string;
  const TOKEN = 'remote-monitoring-token';
  const PORT = 4511;
  const setup = await client.post('server.setupMonitoring', {
    serverId,
    metricsConfig: {
      server: { refreshRate: 30, port: PORT, token: TOKEN, urlCallback: 'http://127.0.0.1:9/cb', retentionDays: 2, cronJob: '0 * * * *', thresholds: { cpu: 0, memory: 0 } },
      containers: { refreshRate: 30, services: { include: [], exclude: [] } },
    },
  });
  if (setup.status !== 200) throw new Error(`server.setupMonitoring: ${setup.status} ${JSON.stringify(setup.body)}`);
  // The collector is not started (jobs: false): the test takes each sample itself.
  const collector = server.kernel.container.cradle.monitoringCollector;
  const hostNetDev = async () => {
    const r = await inHost(h, ['cat', '/proc/net/dev']);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout;
  };
  const metrics = async (dataPoints: string) => {
    const r = await client.get('server.getServerMetrics', { url: `http://${h.address}:${PORT}/metrics`, token: TOKEN, dataPoints });
    if (r.status !== 200) throw new Error(`server.getServerMetrics: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body as { networkIn: string; diskUsed: string; totalDisk: string; timestamp: string; kernel: string }[];
  };
  const MiB = 1024 ** 2;

  t.test("eth0's counters are the namespace's", async t => {
    await collector.collect(serverId); // primes the CPU counters: no sample yet
    t.same(await metrics('all'), [], 'the first reading only primes the CPU counters');
    const before = counters(await hostNetDev(), 'eth0');
    await collector.collect(serverId);
    const after = counters(await hostNetDev(), 'eth0');
    // Sent from this machine to the host's address: its eth0 receives at least the payload.
    const sent = await blast(h.address, 9, 256, 1024);
    const read = counters(await hostNetDev(), 'eth0');
    t.ok(read.rx - after.rx >= sent, `the host's eth0 received the ${sent} bytes sent to it (${read.rx - after.rx})`);
    await collector.collect(serverId);
    const last = counters(await hostNetDev(), 'eth0');

    const samples = await metrics('all');
    t.equal(samples.length, 2, 'two samples after three readings');
    const [first, second] = samples as [(typeof samples)[0], (typeof samples)[0]];
    const inMiB = (n: number) => Number((n / MiB).toFixed(2));
    // networkIn is the peer's: every interface but lo, summed. The kit host is shared with other test
    // files, whose containers and networks add interfaces of their own while this runs (CI saw it
    // 0.01 MiB above eth0): eth0's counter is its floor, and eth0 alone is checked through /metrics below.
    t.ok(Number(first.networkIn) >= inMiB(before.rx), `networkIn ${first.networkIn} MiB holds the host's eth0 at the sample (${inMiB(before.rx)} before it)`);
    t.ok(Number(second.networkIn) >= inMiB(read.rx), `then ${second.networkIn} MiB, at least the ${inMiB(read.rx)} eth0 had before it`);
    t.ok(Number(second.networkIn) - Number(first.networkIn) >= inMiB(sent) - 0.01, 'it rose by the bytes sent, at least');
    const machine = counters(await import('node:fs').then(fs => fs.readFileSync('/proc/net/dev', 'utf8')), 'eth0');
    t.not(Number(second.networkIn), inMiB(machine.rx), "not this machine's eth0");

    const scrape = await client.raw('/metrics', { headers: { 'x-api-key': apiKey } });
    t.equal(scrape.status, 200);
    const text = String(scrape.body);
    const value = (name: string) => Number(new RegExp(`^${name}\\{server="${serverId}",device="eth0"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    const rx = value('berth_host_network_receive_bytes_total');
    t.ok(rx >= read.rx && rx <= last.rx, `/metrics carries the server's eth0 receive counter (${rx}, the host's ${read.rx}–${last.rx})`);
    const tx = value('berth_host_network_transmit_bytes_total');
    t.ok(tx >= after.tx && tx <= last.tx, `and its transmit counter (${tx})`);
    t.match(text, new RegExp(`^berth_host_memory_used_bytes\\{server="${serverId}"\\} \\d+$`, 'm'), 'and its memory');
  });

  t.test("eth0 against Debian's prometheus-node-exporter run inside the host", async t => {
    if (!canRun(t, 'node-exporter', existsSync('/usr/bin/prometheus-node-exporter') ? undefined : 'prometheus-node-exporter is not installed (scripts/services.sh installs it)')) return;
    // The exporter in the host's network and mount namespaces, listening on the host's address.
    const exporter = spawn(
      'nsenter',
      [
        `--target=${h.holderPid}`,
        '--mount',
        '--uts',
        '--net',
        '--',
        '/usr/bin/prometheus-node-exporter',
        `--web.listen-address=${h.address}:9109`,
        '--collector.disable-defaults',
        '--collector.netdev',
      ],
      { stdio: 'ignore' },
    );
    t.teardown(() => void exporter.kill());
    const eth0 = async () => {
      for (let i = 0; i < 100; i++) {
        const text = await fetch(`http://${h.address}:9109/metrics`).then(
          r => r.text(),
          () => null,
        );
        const m = text && /^node_network_receive_bytes_total\{device="eth0"\} (\S+)$/m.exec(text);
        if (m) return Number(m[1]);
        await new Promise(r => setTimeout(r, 100));
      }
      throw new Error('node-exporter in the host answered no eth0 counter');
    };
    await blast(h.address, 9, 64, 1024);
    const before = await eth0();
    await collector.collect(serverId);
    const after = await eth0();
    const scrape = String((await client.raw('/metrics', { headers: { 'x-api-key': apiKey } })).body);
    const rx = Number(new RegExp(`^berth_host_network_receive_bytes_total\\{server="${serverId}",device="eth0"\\} (\\d+)$`, 'm').exec(scrape)?.[1]);
    t.ok(rx >= before && rx <= after, `Berth's eth0 receive counter of the host (${rx}) lies between node-exporter's readings inside it around the sample (${before}–${after})`);
  });

  t.test("the data-root's filesystem, against df inside the host", async t => {
    const root = await inHost(h, ['docker', 'info', '--format', '{{.DockerRootDir}}']);
    t.equal(root.code, 0, root.stderr);
    const df = await inHost(h, ['df', '-P', '-B1', root.stdout.trim()]);
    t.equal(df.code, 0, df.stderr);
    const [, size, , available, , mount] = df.stdout.trim().split('\n').at(-1)!.split(/\s+/);
    const used = Number(size) - Number(available);
    await collector.collect(serverId);
    const scrape = String((await client.raw('/metrics', { headers: { 'x-api-key': apiKey } })).body);
    const metric = (name: string) => Number(new RegExp(`^${name}\\{server="${serverId}",mount="${mount!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"\\} (\\d+)$`, 'm').exec(scrape)?.[1]);
    t.equal(metric('berth_host_disk_size_bytes'), Number(size), `the data-root's mount (${mount}) has the size df gives inside the host`);
    t.ok(Math.abs(metric('berth_host_disk_used_bytes') - used) <= Number(size) / 100, `and its use within 1 % (${metric('berth_host_disk_used_bytes')} vs ${used})`);
    // getServerMetrics' disk is the root mount's, as the peer's agent reports it: df / inside the host.
    const rootDf = (await inHost(h, ['df', '-P', '-B1', '/'])).stdout.trim().split('\n').at(-1)!.split(/\s+/);
    const rootSize = Number(rootDf[1]);
    const latest = (await metrics('1'))[0]!;
    t.equal(latest.totalDisk, (rootSize / 1024 ** 3).toFixed(2), 'getServerMetrics: totalDisk of / inside the host');
    t.ok(Math.abs(Number(latest.diskUsed) - ((rootSize - Number(rootDf[3])) / rootSize) * 100) <= 1, `getServerMetrics: diskUsed within 1 point (${latest.diskUsed} %)`);
  });

  t.test('a swarm manager set up brings its nodes: a worker joined to it is sampled at its own address', async t => {
    // Hosts of this file alone in the shared set: a manager and a worker of their own swarm.
    const [m, w] = [set.hosts[6]!, set.hosts[7]!];
    const serverOf = async (host: typeof m) => {
      const k = await client.post('sshKey.create', { name: `key of ${host.name}`, privateKey: host.privateKey, publicKey: host.publicKey });
      const made = await client.post('server.create', {
        name: host.name,
        ipAddress: host.address,
        port: 22,
        username: host.user,
        sshKeyId: k.body.sshKeyId,
        hostKeyFingerprint: host.hostKeyFingerprint,
      });
      if (made.status !== 200) throw new Error(`server.create: ${made.status} ${JSON.stringify(made.body)}`);
      return made.body.serverId as string;
    };
    const [M, W] = [await serverOf(m), await serverOf(w)];
    const joined = await client.post('cluster.joinServer', { serverId: W, managerServerId: M, role: 'worker' });
    t.equal(joined.status, 200, JSON.stringify(joined.body));
    const NODE_TOKEN = 'swarm-monitoring-token';
    const config = {
      server: { refreshRate: 30, port: 4512, token: NODE_TOKEN, urlCallback: 'http://127.0.0.1:9/cb', retentionDays: 2, cronJob: '0 * * * *', thresholds: { cpu: 0, memory: 0 } },
      containers: { refreshRate: 30, services: { include: [], exclude: [] } },
    };
    const setup = await client.post('server.setupMonitoring', { serverId: M, metricsConfig: config });
    t.equal(setup.status, 200, JSON.stringify(setup.body));
    t.match((await client.get('server.one', { serverId: W })).body, { metricsConfig: { server: { port: 4512, token: NODE_TOKEN, type: 'Remote' } } }, "the worker carries the manager's settings");
    t.match(
      (await client.get('server.one', { serverId })).body,
      { metricsConfig: { server: { port: PORT, token: TOKEN } } },
      'a server set up on its own (not a node of that swarm) keeps its settings',
    );
    await collector.collect(W);
    const before = counters((await inHost(w, ['cat', '/proc/net/dev'])).stdout, 'eth0');
    await collector.collect(W);
    const after = counters((await inHost(w, ['cat', '/proc/net/dev'])).stdout, 'eth0');
    const read = await client.get('server.getServerMetrics', { url: `http://${w.address}:4512/metrics`, token: NODE_TOKEN, dataPoints: 'all' });
    t.equal(read.status, 200, JSON.stringify(read.body));
    t.equal(read.body.length, 1, "one sample of the worker, read at the worker's address");
    const inMiB = (n: number) => Number((n / MiB).toFixed(2));
    t.ok(
      Number(read.body[0].networkIn) >= inMiB(before.rx) && Number(read.body[0].networkIn) <= inMiB(after.rx),
      `its networkIn is the worker's eth0 (${read.body[0].networkIn} MiB, ${inMiB(before.rx)}–${inMiB(after.rx)})`,
    );
    t.equal((await client.get('server.getServerMetrics', { url: `http://${w.address}:4512/metrics`, token: TOKEN, dataPoints: '1' })).status, 401, "another server's token is not the worker's");
  });
}
