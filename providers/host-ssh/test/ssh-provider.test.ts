// The SSH host provider through the host contract's shared suite, against a kit host (its own
// address, sshd and engine), and what the provider adds: the pin reported for the record to
// store, a record without a key refused, the operator's engine transport applied.
import Docker from 'dockerode';
import t from 'tap';
import { canRun, hostConformance } from '@berth/core/testing';
import type { HostServer } from '@berth/core';
import { loadImage, remoteHostsMissing, sharedRemoteHosts } from '@berth/test/remote-hosts';
import descriptor from '../src/index.ts';

if (canRun(t, 'remote-hosts', remoteHostsMissing())) {
  const {
    hosts: [h],
  } = await sharedRemoteHosts(1);
  await loadImage(h!, 'berth-test/busybox:1');
  const server: HostServer = { serverId: 'conformance', ipAddress: h!.address, port: 22, username: h!.user, privateKey: h!.privateKey, hostKeyFingerprint: h!.hostKeyFingerprint };
  const engineId = ((await new Docker({ socketPath: h!.socket }).info()) as { ID: string }).ID;

  hostConformance(t, descriptor, { server, engineId, image: 'berth-test/busybox:1', refuses: [null] });

  const make = (o: { engineTransport: 'stream-local' | 'dial-stdio'; engineSocket: string }) =>
    Promise.resolve(descriptor.create({ maxChannels: 4, keepaliveInterval: 15_000, readyTimeout: 20_000, ...o }, { config: {} as never }));
  const provider = await make({ engineTransport: 'stream-local', engineSocket: '/var/run/docker.sock' });

  t.test('a server without a pinned key pins the first one and reports it once, for the record', async t => {
    const pinned: string[] = [];
    const host = await provider.connect({ ...server, hostKeyFingerprint: null, onHostKeyPinned: (f: string) => pinned.push(f) });
    t.teardown(() => host.close());
    t.equal((await host.run(['hostname'])).stdout, `${h!.name}\n`);
    await host.run(['true']);
    t.same(pinned, [h!.hostKeyFingerprint], 'the fingerprint ssh-keygen prints, once');
  });

  t.test('a pinned key the server does not present is refused with both fingerprints', async t => {
    const wrong = 'SHA256:' + Buffer.alloc(32, 9).toString('base64').replace(/=+$/, '');
    const host = await provider.connect({ ...server, hostKeyFingerprint: wrong });
    t.teardown(() => host.close());
    await t.rejects(host.engine(), { code: 'CONFLICT', expected: wrong, presented: h!.hostKeyFingerprint });
  });

  t.test('a server record without a key is refused before any contact, saying to attach one', async t => {
    await t.rejects(provider.connect({ ...server, privateKey: null }), { code: 'BAD_REQUEST', message: /Server conformance has no SSH key: attach one \(sshKeyId\)/ });
  });

  t.test("the operator's engine options are used: the socket for stream-local, or dial-stdio, which needs none", async t => {
    const elsewhere = await (await make({ engineTransport: 'stream-local', engineSocket: '/nonexistent/docker.sock' })).connect(server);
    t.teardown(() => elsewhere.close());
    await t.rejects((await elsewhere.engine()).info(), Error, 'stream-local to a socket the server lacks fails');
    const dialled = await (await make({ engineTransport: 'dial-stdio', engineSocket: '/nonexistent/docker.sock' })).connect(server);
    t.teardown(() => dialled.close());
    t.equal(((await (await dialled.engine()).info()) as { ID: string }).ID, engineId, "dial-stdio reaches the server's engine");
  });
}
