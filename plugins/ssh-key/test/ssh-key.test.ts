// sshKey.* through the real kernel and a real PostgreSQL database; key formats checked with ssh-keygen.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { startTestServer, signUpAdmin, addMember, Client } from '@berth/core/testing';

const issueFields = (body: { issues?: { path: string[] }[] }) => (body.issues ?? []).map(i => i.path[0]);
const firstTwo = (line: string) => line.trim().split(/\s+/).slice(0, 2).join(' ');

/** The public key ssh-keygen derives from a private key file (mode 0600, as ssh-keygen insists). */
function sshKeygenPublic(dir: string, privateKey: string): string {
  const file = path.join(dir, 'id');
  writeFileSync(file, privateKey, { mode: 0o600 });
  return execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' });
}

t.test('ssh key operations', async t => {
  const server = await startTestServer({ jobs: false });
  t.teardown(() => server.destroy());
  const { client, token, organizationId } = await signUpAdmin(server);

  const ed = await client.post('sshKey.generate', {});
  const rsa = await client.post('sshKey.generate', { type: 'rsa' });
  const listed = async () => (await client.get('sshKey.all')).body as { sshKeyId: string; name: string }[];
  /** A stored Ed25519 key of its own for a subtest. */
  const stored = async (name: string) => {
    const pair = (await client.post('sshKey.generate', {})).body as { publicKey: string; privateKey: string };
    const created = await client.post('sshKey.create', { name, ...pair });
    if (created.status !== 200) throw new Error(`sshKey.create: ${created.status} ${JSON.stringify(created.body)}`);
    return { ...pair, sshKeyId: created.body.sshKeyId as string };
  };

  t.test('generate answers an OpenSSH public key and an OpenSSH private key, stores nothing', async t => {
    t.equal(ed.status, 200);
    t.match(ed.body.publicKey, /^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5[A-Za-z0-9+/]+={0,2}$/);
    t.match(ed.body.privateKey, /^-----BEGIN OPENSSH PRIVATE KEY-----\n[\s\S]+\n-----END OPENSSH PRIVATE KEY-----\n$/);
    t.equal(rsa.status, 200);
    t.match(rsa.body.publicKey, /^ssh-rsa AAAAB3NzaC1yc2E[A-Za-z0-9+/]+={0,2}$/);
    t.match(rsa.body.privateKey, /^-----BEGIN OPENSSH PRIVATE KEY-----\n/);
    const before = await listed();
    await client.post('sshKey.generate', {});
    t.same(await listed(), before, 'generating stored nothing');
    t.equal((await client.post('sshKey.generate', { type: 'dsa' })).status, 400);
  });

  t.test('ssh-keygen derives the same public key from the generated private key', async t => {
    for (const pair of [ed.body, rsa.body]) {
      t.equal(firstTwo(sshKeygenPublic(t.testdir(), pair.privateKey)), firstTwo(pair.publicKey));
    }
  });

  t.test('create → one → all → update → remove, never answering the private key', async t => {
    const created = await client.post('sshKey.create', { name: 'deploy', description: 'for git', ...ed.body });
    t.equal(created.status, 200);
    t.same(Object.keys(created.body).sort(), ['createdAt', 'description', 'lastUsedAt', 'name', 'organizationId', 'publicKey', 'sshKeyId']);
    t.match(created.body, { name: 'deploy', description: 'for git', publicKey: ed.body.publicKey, organizationId, lastUsedAt: null });
    const edKeyId = created.body.sshKeyId;

    const withRsa = await client.post('sshKey.create', { name: 'rsa', publicKey: `${rsa.body.publicKey} me@host`, privateKey: rsa.body.privateKey });
    t.equal(withRsa.status, 200, 'a comment after the public key is fine');
    t.equal(withRsa.body.description, null);

    const one = await client.get('sshKey.one', { sshKeyId: edKeyId });
    t.equal(one.status, 200);
    t.same(one.body, created.body);
    t.notOk('privateKey' in one.body);

    const forApps = await client.get('sshKey.allForApps');
    t.same(
      forApps.body,
      [
        { sshKeyId: withRsa.body.sshKeyId, name: 'rsa' },
        { sshKeyId: edKeyId, name: 'deploy' },
      ],
      'allForApps: newest first, by id and name only',
    );
    const all = await client.get('sshKey.all');
    t.equal(all.status, 200);
    const mine = [edKeyId, withRsa.body.sshKeyId];
    t.same(
      all.body.filter((k: { sshKeyId: string }) => mine.includes(k.sshKeyId)).map((k: { name: string }) => k.name),
      ['rsa', 'deploy'],
      'newest first',
    );
    t.ok(all.body.every((k: object) => !('privateKey' in k)));
    t.notMatch(JSON.stringify(all.body), /PRIVATE KEY/);

    const usedAt = '2026-01-02T03:04:05.000Z';
    const updated = await client.post('sshKey.update', { sshKeyId: edKeyId, name: 'deploy-2', description: null, lastUsedAt: usedAt });
    t.equal(updated.status, 200);
    t.match(updated.body, { sshKeyId: edKeyId, name: 'deploy-2', description: null, lastUsedAt: usedAt, publicKey: ed.body.publicKey });
    t.notOk('privateKey' in updated.body);
    t.equal((await client.get('sshKey.one', { sshKeyId: edKeyId })).body.name, 'deploy-2');
    t.equal((await client.post('sshKey.update', { sshKeyId: edKeyId, name: '' })).status, 400);
    t.equal((await client.post('sshKey.update', { sshKeyId: 'missing', name: 'x' })).status, 404);

    const removed = await client.post('sshKey.remove', { sshKeyId: withRsa.body.sshKeyId });
    t.equal(removed.status, 200);
    t.same(removed.body, withRsa.body);
    t.equal((await client.get('sshKey.one', { sshKeyId: withRsa.body.sshKeyId })).status, 404);
    t.equal((await client.post('sshKey.remove', { sshKeyId: withRsa.body.sshKeyId })).status, 404);
  });

  t.test('the database holds the private key sealed', async t => {
    const { sshKeyId } = await stored('sealed');
    // The server's own connection: the same on an external PostgreSQL and on the embedded database.
    const rows: { private_key: string }[] = await server.kernel.container.cradle.orm.em.getConnection().execute('select private_key from ssh_keys where ssh_key_id = ?', [sshKeyId]);
    t.equal(rows.length, 1);
    t.match(rows[0]!.private_key, /^v1:/);
    t.notMatch(rows[0]!.private_key, /PRIVATE KEY/);
  });

  t.test('the container service gives other plugins the decrypted private key', async t => {
    const { sshKeyId, privateKey } = await stored('handed');
    const { sshKeys, orm } = server.kernel.container.cradle;
    const em = orm.em.fork();
    t.equal((await sshKeys.privateKey(sshKeyId, organizationId, em)).trim(), privateKey.trim());
    await t.rejects(sshKeys.privateKey(sshKeyId, 'another-organization', em), { code: 'NOT_FOUND' });
  });

  t.test('keys that do not parse or do not match are 400s naming the field', async t => {
    const before = await listed();
    const mismatched = await client.post('sshKey.create', { name: 'x', publicKey: rsa.body.publicKey, privateKey: ed.body.privateKey });
    t.equal(mismatched.status, 400);
    t.same(issueFields(mismatched.body), ['privateKey']);
    t.match(mismatched.body.issues[0].message, /does not match/);
    const otherEd = (await client.post('sshKey.generate', {})).body;
    t.same(issueFields((await client.post('sshKey.create', { name: 'x', publicKey: otherEd.publicKey, privateKey: ed.body.privateKey })).body), ['privateKey'], 'two Ed25519 keys that are not a pair');

    const badPrivate = await client.post('sshKey.create', { name: 'x', publicKey: ed.body.publicKey, privateKey: 'not a key' });
    t.equal(badPrivate.status, 400);
    t.same(issueFields(badPrivate.body), ['privateKey']);
    const badPublic = await client.post('sshKey.create', { name: 'x', publicKey: 'ssh-ed25519 bm90IGEga2V5', privateKey: ed.body.privateKey });
    t.equal(badPublic.status, 400);
    t.same(issueFields(badPublic.body), ['publicKey']);
    t.same(issueFields((await client.post('sshKey.create', { name: 'x', publicKey: 'garbage', privateKey: ed.body.privateKey })).body), ['publicKey']);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    t.same(issueFields((await client.post('sshKey.create', { name: 'x', publicKey: ed.body.publicKey, privateKey: ec })).body), ['privateKey'], 'only RSA and Ed25519');
    t.same(issueFields((await client.post('sshKey.create', { name: '', ...ed.body })).body), ['name']);
    t.same(issueFields((await client.post('sshKey.create', { name: 'x', publicKey: ed.body.publicKey })).body), ['privateKey']);
    t.same(await listed(), before, 'nothing stored');
  });

  t.test('keys as ssh-keygen writes them (OpenSSH format) and PEM keys are accepted', async t => {
    for (const type of ['ed25519', 'rsa']) {
      const dir = t.testdir();
      const file = path.join(dir, 'id');
      execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', 'me@host', '-f', file]);
      const { readFileSync } = await import('node:fs');
      const privateKey = readFileSync(file, 'utf8');
      const publicKey = readFileSync(`${file}.pub`, 'utf8');
      t.match(privateKey, /BEGIN OPENSSH PRIVATE KEY/);
      const res = await client.post('sshKey.create', { name: `openssh-${type}`, publicKey, privateKey });
      t.equal(res.status, 200, type);
      const { sshKeys, orm } = server.kernel.container.cradle;
      t.equal(await sshKeys.privateKey(res.body.sshKeyId, organizationId, orm.em.fork()), privateKey, 'handed back as given');
      const other = (await client.post('sshKey.generate', { type })).body;
      t.equal((await client.post('sshKey.create', { name: 'x', publicKey: other.publicKey, privateKey })).status, 400, 'and checked against the public key');
      await client.post('sshKey.remove', { sshKeyId: res.body.sshKeyId });
    }
    const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const pemCreated = await client.post('sshKey.create', { name: 'pem', publicKey: sshKeygenPublic(t.testdir(), pem), privateKey: pem });
    t.equal(pemCreated.status, 200, 'a PKCS#8 PEM private key too');
    await client.post('sshKey.remove', { sshKeyId: pemCreated.body.sshKeyId });
    const dir = t.testdir();
    const file = path.join(dir, 'id');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'secret phrase', '-f', file]);
    const { readFileSync } = await import('node:fs');
    const locked = await client.post('sshKey.create', { name: 'locked', publicKey: readFileSync(`${file}.pub`, 'utf8'), privateKey: readFileSync(file, 'utf8') });
    t.equal(locked.status, 400);
    t.same(issueFields(locked.body), ['privateKey']);
    t.match(locked.body.issues[0].message, /passphrase/);
  });

  t.test('another organization can neither read nor change these keys', async t => {
    const { sshKeyId } = await stored('walled');
    const org = await new Client(server.url, { token }).post('organization.create', { name: 'Other' });
    t.equal(org.status, 200);
    const key = await new Client(server.url, { token }).post('user.createApiKey', { name: 'other', metadata: { organizationId: org.body.id } });
    t.equal(key.status, 200);
    const other = new Client(server.url, { apiKey: key.body.key });
    t.equal((await other.get('sshKey.one', { sshKeyId })).status, 404);
    t.equal((await other.post('sshKey.update', { sshKeyId, name: 'hijacked' })).status, 404);
    t.equal((await other.post('sshKey.remove', { sshKeyId })).status, 404);
    t.same((await other.get('sshKey.all')).body, []);
    const own = await other.post('sshKey.create', { name: 'theirs', ...(await other.post('sshKey.generate', {})).body });
    t.equal(own.status, 200);
    t.notOk(
      (await listed()).some(k => k.sshKeyId === own.body.sshKeyId),
      'and theirs is not ours',
    );
    t.equal((await client.get('sshKey.one', { sshKeyId: own.body.sshKeyId })).status, 404);
    t.equal((await client.get('sshKey.one', { sshKeyId })).body.name, 'walled', 'untouched');
  });

  t.test('a member can read but not create or remove keys', async t => {
    const { sshKeyId } = await stored('guarded');
    const { client: member } = await addMember(server, client, 'member@example.com');
    t.equal((await member.get('sshKey.all')).status, 200);
    t.equal((await member.get('sshKey.one', { sshKeyId })).status, 200);
    t.equal((await member.post('sshKey.create', { name: 'nope', ...ed.body })).status, 403);
    t.equal((await member.post('sshKey.remove', { sshKeyId })).status, 403);
    t.equal((await client.get('sshKey.one', { sshKeyId })).status, 200, 'still there');
  });

  t.test('without credentials every operation is 401', async t => {
    const anon = new Client(server.url);
    t.equal((await anon.get('sshKey.all')).status, 401);
    t.equal((await anon.post('sshKey.generate', {})).status, 401);
  });
});
