// hosts.of(serverId | null) on a kernel with the hosts plugin: this machine through host.local
// (the same prepared engine as hosts.local()), a server through host.ssh from the server
// directory (a kit host: its own sshd and engine), one connection per server, forget.
import { createConnection, type Socket } from 'node:net';
import Docker from 'dockerode';
import t from 'tap';
import { asValue, type HostServer } from '@berth/core';
import { canRun, startTestServer } from '@berth/core/testing';
import { privateRemoteHosts, remoteHostsMissing, sharedRemoteHosts } from '@berth/test/remote-hosts';
import type { Host } from '../src/index.ts';

const server = await startTestServer({ plugins: ['hosts'], jobs: false });
t.teardown(() => server.destroy());
const { hosts } = server.kernel.container.cradle;

t.test('of(null) is this machine: the prepared local engine and its programs', async t => {
  const machine = await hosts.of(null);
  const docker = await machine.engine();
  t.equal(docker, await hosts.local(), 'the same engine as hosts.local()');
  const info = (await docker.info()) as { Name: string; Swarm: { LocalNodeState: string } };
  t.equal(info.Swarm.LocalNodeState, 'active', 'in swarm mode');
  t.equal((await machine.run(['hostname'])).stdout.trim(), info.Name, "commands run on the engine's machine");
  t.same(await machine.run(['printf', '%s', 'a; echo b']), { code: 0, signal: null, stdout: 'a; echo b', stderr: '' }, 'an argument array');
});

t.test('a server nobody keeps is NOT_FOUND, naming it', async t => {
  await t.rejects(hosts.of('srv-none'), { code: 'NOT_FOUND', message: 'Server srv-none not found' });
});

if (canRun(t, 'remote-hosts', remoteHostsMissing())) {
  t.test('a server of the directory is reached over SSH, one connection reused until forgotten', async t => {
    const {
      hosts: [h],
    } = await sharedRemoteHosts(1);
    const asked: string[] = [];
    const record: HostServer = { serverId: 'srv-kit', ipAddress: h!.address, port: 22, username: h!.user, privateKey: h!.privateKey, hostKeyFingerprint: h!.hostKeyFingerprint };
    server.kernel.container.register({
      hostServers: asValue({
        server: async (id: string) => {
          asked.push(id);
          return id === record.serverId ? record : null;
        },
      }),
    });
    t.teardown(() => hosts.forget('srv-kit'));
    const remote: Host = await hosts.of('srv-kit');
    t.equal((await remote.run(['hostname'])).stdout, `${h!.name}\n`, 'a command runs on the server');
    const engineId = ((await new Docker({ socketPath: h!.socket }).info()) as { ID: string }).ID;
    t.equal(((await (await remote.engine()).info()) as { ID: string }).ID, engineId, "the engine is the server's");
    t.not(engineId, ((await (await hosts.local()).info()) as { ID: string }).ID, "not this machine's");
    t.equal(await hosts.of('srv-kit'), remote, 'the same connection again');
    t.same(asked, ['srv-kit'], 'the record read once');
    await hosts.forget('srv-kit');
    await t.rejects(remote.run(['true']), { code: 'SERVICE_UNAVAILABLE' }, 'a forgotten connection is closed');
    const again = await hosts.of('srv-kit');
    t.not(again, remote, 'the next of() connects again');
    t.equal((await again.run(['hostname'])).stdout, `${h!.name}\n`);
    t.same(asked, ['srv-kit', 'srv-kit'], 'reading the record again');
    await t.rejects(hosts.of('srv-other'), { code: 'NOT_FOUND', message: 'Server srv-other not found' }, 'a server the directory lacks');
  });

  t.test('two first uses at once (two processes, two records of one machine): both take the swarm one of them made', async t => {
    const set = await privateRemoteHosts(1);
    t.teardown(() => set.down());
    const h = set.hosts[0]!;
    const direct = new Docker({ socketPath: h.socket });
    if (((await direct.info()) as { Swarm: { LocalNodeState: string } }).Swarm.LocalNodeState === 'active') await direct.swarmLeave({ force: true });
    const at = (serverId: string): HostServer => ({ serverId, ipAddress: h.address, port: 22, username: h.user, privateKey: h.privateKey, hostKeyFingerprint: h.hostKeyFingerprint });
    server.kernel.container.register({ hostServers: asValue({ server: async (id: string) => (id.startsWith('srv-race-') ? at(id) : null) }) });
    t.teardown(() => Promise.all([hosts.forget('srv-race-a'), hosts.forget('srv-race-b')]));
    const [a, b] = await Promise.all([hosts.of('srv-race-a'), hosts.of('srv-race-b')]);
    // Each reads "inactive", then both initialise: one is told the node is already in a swarm.
    const engines = await Promise.all([a.engine(), b.engine()]);
    t.equal(engines.length, 2, 'both prepared, neither refused');
    t.equal(((await direct.info()) as { Swarm: { LocalNodeState: string } }).Swarm.LocalNodeState, 'active', 'one swarm, active');
  });

  t.test("a server's engine is prepared on first use; programs reach it through a forwarded socket, many idle connections at once", async t => {
    const {
      hosts: [h],
    } = await sharedRemoteHosts(1);
    const record: HostServer = { serverId: 'srv-sock', ipAddress: h!.address, port: 22, username: h!.user, privateKey: h!.privateKey, hostKeyFingerprint: h!.hostKeyFingerprint };
    server.kernel.container.register({ hostServers: asValue({ server: async (id: string) => (id === record.serverId ? record : null) }) });
    t.teardown(() => hosts.forget('srv-sock'));
    const engine = await (await hosts.of('srv-sock')).engine();
    const info = (await engine.info()) as { ID: string; Swarm: { LocalNodeState: string; NodeAddr: string } };
    t.equal(info.Swarm.LocalNodeState, 'active', 'in swarm mode');
    t.equal(info.Swarm.NodeAddr, h!.address, "advertising the server's address");
    t.ok(
      (await engine.listNetworks({ filters: { name: [hosts.platformNetwork] } })).some(n => n.Name === hosts.platformNetwork),
      'with the platform network',
    );
    t.equal(await hosts.dockerHost(null), undefined, "this machine: the program's own environment");
    const dockerHost = await hosts.dockerHost('srv-sock');
    t.match(dockerHost, /^unix:\/\//);
    t.equal(await hosts.dockerHost('srv-sock'), dockerHost, 'one socket per server');
    const socketPath = dockerHost!.slice('unix://'.length);
    // More connections than the connection's channel slots (8), all held open at once (as the
    // Compose program's pool holds them): forwards take no slot, so each one is answered.
    // Each connection settles on its own (answered, refused, or silent for 15 s), so a forward that
    // takes a slot shows as connections left unanswered rather than as a hang.
    const sockets: Socket[] = [];
    const outcomes = await Promise.all(
      Array.from(
        { length: 12 },
        () =>
          new Promise<string>(resolve => {
            const c = createConnection(socketPath);
            sockets.push(c);
            const timer = setTimeout(() => resolve('no answer within 15 s'), 15_000);
            const settle = (outcome: string) => {
              clearTimeout(timer);
              resolve(outcome);
            };
            let reply = '';
            c.on('data', d => {
              reply += d;
              if (reply.includes('\r\n\r\n')) settle(reply.startsWith('HTTP/1.1 200') ? 'answered' : reply.split('\r\n')[0]!);
            });
            c.on('error', e => settle(e.message));
            c.on('close', () => settle('closed before an answer'));
            c.write('GET /_ping HTTP/1.1\r\nHost: docker\r\nConnection: keep-alive\r\n\r\n');
          }),
      ),
    );
    t.same(
      outcomes.filter(o => o !== 'answered'),
      [],
      'twelve connections answered',
    );
    t.equal(sockets.filter(c => !c.destroyed && c.readyState === 'open').length, 12, 'and all twelve still open together');
    for (const c of sockets) c.destroy();
    t.equal(((await new Docker({ socketPath }).info()) as { ID: string }).ID, info.ID, "the socket reaches the server's engine");
    await hosts.forget('srv-sock');
    await t.rejects(new Docker({ socketPath }).info(), { code: 'ENOENT' }, 'the socket goes with the connection');
  });

  t.test("shutting Berth down closes the servers' connections", async t => {
    const {
      hosts: [h],
    } = await sharedRemoteHosts(1);
    const other = await startTestServer({ plugins: ['hosts'], jobs: false });
    const record: HostServer = { serverId: 'srv-kit', ipAddress: h!.address, port: 22, username: h!.user, privateKey: h!.privateKey, hostKeyFingerprint: h!.hostKeyFingerprint };
    other.kernel.container.register({ hostServers: asValue({ server: async () => record }) });
    const remote = await other.kernel.container.cradle.hosts.of('srv-kit');
    t.equal((await remote.run(['echo', 'up'])).stdout, 'up\n');
    await other.destroy();
    await t.rejects(remote.run(['true']), { code: 'SERVICE_UNAVAILABLE', message: /closed/ }, 'the connection is closed with the server');
    // Work still running while Berth stops (a job, a probe) makes no connection that nothing would close.
    const { hosts: stopped } = other.kernel.container.cradle;
    await t.rejects(stopped.of('srv-kit'), { code: 'SERVICE_UNAVAILABLE', message: 'Berth is stopping: no new connection to server srv-kit' }, 'no new connection to a server');
    await t.rejects(stopped.of(null), { code: 'SERVICE_UNAVAILABLE', message: 'Berth is stopping: no new connection to this machine' }, 'nor to this machine');
  });
}
