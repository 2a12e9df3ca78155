// The organization's default SSH key through the real kernel, PostgreSQL and a kit host (its own
// sshd): a server with sshKeyId null is refused with the message to attach a key, reaches the host
// once settings.saveSSHPrivateKey stored the key (sealed), and fails again with that message after
// settings.cleanSSHPrivateKey (its pooled connection closed). Another organization's keyless
// server never uses it. Bad keys are refused naming the field; members may not save one.
import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { addMember, canRun, otherOrganization, signUpAdmin, startTestServer, type Client } from '@berth/core/testing';
import { remoteHostsMissing, sharedRemoteHosts } from '@berth/test/remote-hosts';

t.setTimeout(300_000);
const NO_KEY = /has no SSH key: attach one \(server\.update with sshKeyId\), or save the organization's default key \(settings\.saveSSHPrivateKey\)/;

t.test('saving and removing the default key', async t => {
  const server = await startTestServer({ proxy: 'none', jobs: false });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const c = admin.client;
  const sql = (query: string, params: unknown[] = []) => server.kernel.container.cradle.orm.em.fork().getConnection().execute<Record<string, any>[]>(query, params);

  t.test('bad keys are refused naming sshPrivateKey, nothing stored', async t => {
    const encrypted = generateKeyPairSync('ed25519', {
      privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    }).privateKey;
    for (const [key, message] of [
      ['not a key', /is not a private key: a PEM/],
      ['', /is not a private key/],
      ['-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----', /is not a private key Berth can read/],
      ['-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----', /its content is damaged/],
      [encrypted, /protected by a passphrase/],
    ] as const) {
      const r = await c.post('settings.saveSSHPrivateKey', { sshPrivateKey: key });
      t.equal(r.status, 400, key.slice(0, 40));
      t.match(r.body.issues, [{ path: ['sshPrivateKey'], message }]);
    }
    t.equal((await c.post('settings.saveSSHPrivateKey', {})).status, 400, 'sshPrivateKey is required');
    t.equal((await c.post('settings.saveSSHPrivateKey', { sshPrivateKey: 12 })).status, 400, 'a string');
    t.same(await sql('select * from default_ssh_keys'), [], 'nothing stored');
  });

  t.test('a PEM key is stored sealed; members may neither save nor remove one', async t => {
    const pem = generateKeyPairSync('ed25519', { privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;
    t.equal((await c.post('settings.saveSSHPrivateKey', { sshPrivateKey: pem })).body, true);
    const [row] = await sql('select * from default_ssh_keys');
    t.equal(row?.organization_id, admin.organizationId, "the caller's organization's");
    t.match(row?.private_key, /^v1:/, 'sealed');
    t.notMatch(row?.private_key, /PRIVATE KEY/, 'no plain text');
    const member = await addMember(server, c, 'member@example.com', 'member');
    t.equal((await member.client.post('settings.saveSSHPrivateKey', { sshPrivateKey: pem })).status, 403, 'a member may not save it');
    t.equal((await member.client.post('settings.cleanSSHPrivateKey', {})).status, 403, 'nor remove it');
    t.equal((await c.post('settings.cleanSSHPrivateKey', {})).body, true);
    t.same(await sql('select * from default_ssh_keys'), [], 'removed');
    t.equal((await c.post('settings.cleanSSHPrivateKey', {})).body, true, 'removing none is no error');
  });

  if (!canRun(t, 'remote-hosts', remoteHostsMissing())) return;

  t.test('a server without a key of its own on a real host', async t => {
    const set = await sharedRemoteHosts(1);
    const h = set.hosts[0]!;
    const keyless = async (client: Client) => {
      const created = await client.post('server.create', { name: 'keyless', ipAddress: h.address, port: 22, username: h.user, sshKeyId: null, hostKeyFingerprint: h.hostKeyFingerprint });
      t.equal(created.status, 200, JSON.stringify(created.body));
      return created.body.serverId as string;
    };
    const serverId = await keyless(c);
    const { hosts } = server.kernel.container.cradle;
    const refused = async (what: string) => {
      const r = await c.get('server.publicIp', { serverId });
      t.equal(r.status, 400, `${what}: server.publicIp is refused`);
      t.match(r.body.message, NO_KEY, 'with the message to attach a key');
      await t.rejects(
        hosts.of(serverId).then(host => host.run(['true'])),
        { code: 'BAD_REQUEST', message: NO_KEY },
        'and hosts.of refuses to connect',
      );
    };
    await refused('no default key');

    t.equal((await c.post('settings.saveSSHPrivateKey', { sshPrivateKey: h.privateKey })).body, true, "the host's authorized key (OpenSSH format) is saved");
    t.equal((await c.get('server.publicIp', { serverId })).status, 200, 'the keyless server is reached with it (server.publicIp runs on it)');
    t.equal((await (await hosts.of(serverId)).run(['id', '-un'])).stdout.trim(), h.user, 'logged in as its user');

    const other = await otherOrganization(server, admin.userId);
    const theirs = await keyless(other.client);
    const r = await other.client.get('server.publicIp', { serverId: theirs });
    t.equal(r.status, 400, "another organization's keyless server does not use this organization's key");
    t.match(r.body.message, NO_KEY);

    // The reachability probe: it probes a keyless server with its organization's default key (a
    // failed probe counted before is cleared by the answer), and leaves one with no key at all alone.
    await sql('update servers set failed_probes = 1 where server_id in (?, ?)', [serverId, theirs]);
    await server.kernel.container.cradle.serverProbe.sweep();
    const probes = Object.fromEntries((await sql('select server_id, failed_probes from servers where server_id in (?, ?)', [serverId, theirs])).map(r => [r.server_id, r.failed_probes]));
    t.same(probes, { [serverId]: 0, [theirs]: 1 }, 'the probe reached the keyless server with the default key, and left the one with no key alone');

    t.equal((await c.post('settings.cleanSSHPrivateKey', {})).body, true);
    await refused('after cleanSSHPrivateKey (the pooled connection closed)');

    t.equal((await c.post('settings.saveSSHPrivateKey', { sshPrivateKey: h.privateKey })).body, true);
    t.equal((await c.get('server.publicIp', { serverId })).status, 200, 'saved again: reached again');
    t.equal((await c.post('settings.saveSSHPrivateKey', { sshPrivateKey: null })).body, true, "null removes it (the older variant's way)");
    await refused('after saveSSHPrivateKey null');
  });
});
