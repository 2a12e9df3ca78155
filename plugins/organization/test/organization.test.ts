// organization.* over HTTP: tenants, their owner and members, the active organization of
// a session or a key, and the wall between organizations.
import t from 'tap';
import { startTestServer, signUpAdmin, addMember, Client, type TestServer } from '@berth/core/testing';

const start = () => startTestServer({ plugins: ['auth', 'user', 'organization'], jobs: false });
const PASSWORD = 'correct horse battery';
const forbidden = { code: 'FORBIDDEN', message: String, issues: [] };

const addUser = addMember;

async function keyFor(server: TestServer, holder: Client, organizationId: string, name = 'key') {
  const key = await holder.post('user.createApiKey', { name, metadata: { organizationId } });
  if (key.status !== 200) throw new Error(`createApiKey: ${key.status} ${JSON.stringify(key.body)}`);
  return new Client(server.url, { apiKey: key.body.key });
}

t.test('organizations of one account', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'owner@example.com', PASSWORD);
  const anon = new Client(server.url);

  // The first admin keeps its one organization; every other subtest has an account of its own, a
  // member of the admin's organization that founds a second one (so each stands alone).
  const founder = async (email: string) => {
    const account = await addUser(server, admin.client, email);
    const acme = await account.client.post('organization.create', { name: 'Acme', logo: 'https://example.com/acme.png' });
    if (acme.status !== 200) throw new Error(`organization.create: ${acme.status} ${JSON.stringify(acme.body)}`);
    return { ...account, email, acme: acme.body.id as string };
  };

  t.test('the first admin starts with one organization it owns', async t => {
    const all = await admin.client.get('organization.all');
    t.equal(all.status, 200);
    t.equal(all.body.length, 1);
    t.match(all.body[0], { id: admin.organizationId, organizationId: admin.organizationId, name: String, ownerId: admin.userId, slug: null, logo: null, createdAt: String });
    const active = await admin.client.get('organization.active');
    t.same(active.body, all.body[0]);
    t.equal((await anon.get('organization.all')).status, 401);
  });

  t.test('create: the caller becomes the owner of the new organization', async t => {
    const creator = await addUser(server, admin.client, 'creator@example.com');
    const r = await creator.client.post('organization.create', { name: 'Acme', logo: 'https://example.com/acme.png' });
    t.equal(r.status, 200);
    t.match(r.body, { id: String, organizationId: r.body.id, name: 'Acme', logo: 'https://example.com/acme.png', ownerId: creator.userId });
    t.not(r.body.id, admin.organizationId);
    const inIt = await keyFor(server, creator.client, r.body.id, 'acme');
    const me = await inIt.get('user.get');
    t.match(me.body, { organizationId: r.body.id, role: 'owner', userId: creator.userId }, 'owner of it');
    t.equal((await inIt.get('user.haveRootAccess')).body, true);
    t.same(
      (await inIt.get('user.all')).body.map((m: { userId: string }) => m.userId),
      [creator.userId],
      'its only member',
    );
    t.equal((await creator.client.get('organization.active')).body.id, admin.organizationId, 'creating does not switch the session');
    const noName = await creator.client.post('organization.create', { name: '' });
    t.equal(noName.status, 400);
    t.same(
      noName.body.issues.map((i: { path: string[] }) => i.path),
      [['name']],
    );
  });

  t.test('all and one', async t => {
    const f = await founder('lister@example.com');
    const all = await f.client.get('organization.all');
    t.same(
      all.body.map((o: { id: string }) => o.id),
      [admin.organizationId, f.acme],
      'both, oldest first',
    );
    const one = await f.client.get('organization.one', { organizationId: f.acme });
    t.equal(one.status, 200);
    t.match(one.body, { id: f.acme, name: 'Acme', ownerId: f.userId });
    t.same((await f.client.trpc('query', 'organization.one', { organizationId: f.acme })).body, { result: { data: { json: one.body } } });
    const missing = await f.client.get('organization.one', { organizationId: 'no-such-organization' });
    t.equal(missing.status, 404);
    t.match(missing.body, { code: 'NOT_FOUND', issues: [] });
    const empty = await f.client.get('organization.one', { organizationId: '' });
    t.equal(empty.status, 400);
  });

  t.test('update renames an organization', async t => {
    const { client, acme } = await founder('renamer@example.com');
    const r = await client.post('organization.update', { organizationId: acme, name: 'Acme Corp' });
    t.equal(r.status, 200);
    t.match(r.body, { id: acme, name: 'Acme Corp', logo: 'https://example.com/acme.png' }, 'an absent logo is kept');
    t.equal((await client.get('organization.one', { organizationId: acme })).body.name, 'Acme Corp');
    const relogo = await client.post('organization.update', { organizationId: acme, name: 'Acme Corp', logo: 'https://example.com/new.png' });
    t.equal(relogo.body.logo, 'https://example.com/new.png');
    t.equal((await client.post('organization.update', { organizationId: acme, name: '' })).status, 400);
    t.equal((await client.post('organization.update', { organizationId: 'no-such-organization', name: 'x' })).status, 404);
  });

  t.test('setDefault: the session and every new login act in that organization', async t => {
    const f = await founder('switcher@example.com');
    const loginAs = () => anon.post('auth.login', { email: f.email, password: f.password });
    const s = new Client(server.url, { token: (await loginAs()).body.token });
    t.equal((await s.get('organization.active')).body.id, admin.organizationId, 'before: the first organization');
    const r = await s.post('organization.setDefault', { organizationId: f.acme });
    t.equal(r.status, 200);
    t.same(r.body, { success: true }, 'answers {success: true}, as the peer does');
    t.equal((await s.get('organization.active')).body.id, f.acme, 'the session that asked switched');

    const login = await loginAs();
    t.equal(login.body.organizationId, f.acme, 'a new login answers the default organization');
    const fresh = new Client(server.url, { token: login.body.token });
    const active = await fresh.get('organization.active');
    t.equal(active.status, 200);
    t.match(active.body, { id: f.acme, name: 'Acme' }, 'and its token acts there');
    t.equal((await fresh.get('user.get')).body.organizationId, f.acme);
    t.equal((await fresh.get('auth.get')).body.organizationId, f.acme);

    const key = await keyFor(server, f.client, admin.organizationId, 'first');
    t.equal((await key.get('organization.active')).body.id, admin.organizationId, 'an API key stays in its own organization');
    t.equal((await f.client.get('organization.active')).body.id, admin.organizationId, 'other sessions are not moved');

    const notMine = await s.post('organization.setDefault', { organizationId: 'no-such-organization' });
    t.equal(notMine.status, 404);
    t.equal((await s.get('organization.active')).body.id, f.acme, 'a refused switch changes nothing');

    t.equal((await s.post('organization.setDefault', { organizationId: admin.organizationId })).status, 200);
    t.equal((await loginAs()).body.organizationId, admin.organizationId, 'and back');
  });

  t.test('delete: only the owner, never the only organization', async t => {
    const f = await founder('deleter@example.com');
    const third = await f.client.post('organization.create', { name: 'Short-lived' });
    const keyInThird = await keyFor(server, f.client, third.body.id, 'third');
    t.equal((await keyInThird.get('organization.active')).status, 200);
    const deputy = await addUser(server, keyInThird, 'short-lived-deputy@example.com', 'admin');
    const byAdmin = await deputy.client.post('organization.delete', { organizationId: third.body.id });
    t.equal(byAdmin.status, 403, 'an admin cannot delete the organization');
    t.match(byAdmin.body, forbidden);

    const r = await f.client.post('organization.delete', { organizationId: third.body.id });
    t.equal(r.status, 200);
    t.match(r.body, { id: third.body.id, name: 'Short-lived', ownerId: third.body.ownerId }, 'answers the organization as it was');
    t.equal((await f.client.get('organization.one', { organizationId: third.body.id })).status, 404, 'it is gone');
    t.notOk((await f.client.get('organization.all')).body.some((o: { id: string }) => o.id === third.body.id));
    t.equal((await keyInThird.get('organization.active')).status, 401, 'a key acting in it no longer works');
    t.equal((await deputy.client.get('user.get')).status, 401, 'nor a session acting in it');
    t.equal((await f.client.post('organization.delete', { organizationId: third.body.id })).status, 404, 'deleting it twice');
    const onlyOwned = await f.client.post('organization.delete', { organizationId: f.acme });
    t.equal(onlyOwned.status, 403, 'the only organization it owns cannot be deleted, though it is a member of another');
    t.match(onlyOwned.body, forbidden);
    t.same(
      (await f.client.get('organization.all')).body.map((o: { id: string }) => o.id),
      [admin.organizationId, f.acme],
    );

    // The first admin owns exactly one organization, and belongs to no other.
    const last = await admin.client.post('organization.delete', { organizationId: admin.organizationId });
    t.equal(last.status, 403, 'the only organization left cannot be deleted');
    t.match(last.body, forbidden);
    t.equal((await admin.client.get('organization.active')).status, 200, 'it is still there');
    t.same(
      (await admin.client.get('organization.all')).body.map((o: { id: string }) => o.id),
      [admin.organizationId],
    );
  });
});

t.test('members and roles', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'owner@example.com', PASSWORD);
  const anon = new Client(server.url);
  const member = await addUser(server, admin.client, 'member@example.com');
  const deputy = await addUser(server, admin.client, 'deputy@example.com', 'admin');

  await t.test('updateMemberRole by membership id or user id', async t => {
    const member = await addUser(server, admin.client, 'promoted@example.com');
    t.equal((await member.client.get('organization.allInvitations')).status, 403, 'a member cannot use admin operations');
    const up = await admin.client.post('organization.updateMemberRole', { memberId: member.membershipId, role: 'admin' });
    t.same([up.status, up.body], [200, true], 'answers true, as the peer does');
    t.match((await admin.client.get('user.one', { userId: member.userId })).body, { id: member.membershipId, userId: member.userId, role: 'admin', organizationId: admin.organizationId });
    t.equal((await member.client.get('user.get')).body.role, 'admin', 'the member sees its new role');
    t.equal((await member.client.get('auth.get')).body.rol, 'admin');
    t.equal((await member.client.get('organization.allInvitations')).status, 200, 'and may use admin operations at once');

    const down = await deputy.client.post('organization.updateMemberRole', { memberId: member.userId, role: 'member' });
    t.equal(down.status, 200, 'an admin may change roles, naming the user id');
    t.equal((await admin.client.get('user.one', { userId: member.userId })).body.role, 'member');
    t.equal((await member.client.get('organization.allInvitations')).status, 403, 'back to a member');
  });

  await t.test('updateMemberRole: the owner keeps its role; members and strangers change nothing', async t => {
    const owner = await deputy.client.post('organization.updateMemberRole', { memberId: admin.userId, role: 'member' });
    t.equal(owner.status, 403);
    t.match(owner.body, forbidden);
    t.equal((await admin.client.get('user.get')).body.role, 'owner');
    const self = await admin.client.post('organization.updateMemberRole', { memberId: admin.userId, role: 'admin' });
    t.equal(self.status, 403, 'not even by the owner: there is always one owner');

    const byMember = await member.client.post('organization.updateMemberRole', { memberId: member.userId, role: 'admin' });
    t.equal(byMember.status, 403, 'a member cannot promote itself');
    t.match(byMember.body, { code: 'FORBIDDEN', message: /^organization\.updateMemberRole needs the permission member\.update/, issues: [] });
    t.equal((await member.client.get('user.get')).body.role, 'member');

    t.equal((await admin.client.post('organization.updateMemberRole', { memberId: 'no-such-member', role: 'admin' })).status, 404);
    const bad = await admin.client.post('organization.updateMemberRole', { memberId: member.userId, role: 'owner' });
    t.equal(bad.status, 400, 'owner is not a role one can give');
    t.same(
      bad.body.issues.map((i: { path: string[] }) => i.path),
      [['role']],
    );
    t.equal((await anon.post('organization.updateMemberRole', { memberId: member.userId, role: 'admin' })).status, 401);
  });

  await t.test('update: admins rename the organization, members may not', async t => {
    const byMember = await member.client.post('organization.update', { organizationId: admin.organizationId, name: 'Hijacked' });
    t.equal(byMember.status, 403);
    t.match(byMember.body, forbidden);
    const byAdmin = await deputy.client.post('organization.update', { organizationId: admin.organizationId, name: 'Renamed by deputy' });
    t.equal(byAdmin.status, 200);
    t.equal((await member.client.get('organization.active')).body.name, 'Renamed by deputy', 'members see it');
    t.equal((await member.client.post('organization.delete', { organizationId: admin.organizationId })).status, 403, 'members cannot delete');
  });
});

t.test('the wall between organizations', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'owner@example.com', PASSWORD);
  const orgA = admin.organizationId;
  // Org B belongs to another account, which the first admin has no part in.
  const bob = await addUser(server, admin.client, 'bob@example.com');
  const created = await bob.client.post('organization.create', { name: 'Bob Ltd' });
  t.equal(created.status, 200);
  const orgB = created.body.id as string;
  const bobInB = await keyFor(server, bob.client, orgB, 'bob-b');
  const carol = await addUser(server, bobInB, 'carol@example.com');
  const aliceInA = admin.client;

  await t.test('a member of A cannot read, change or delete B: it is not found', async t => {
    const one = await aliceInA.get('organization.one', { organizationId: orgB });
    t.equal(one.status, 404, "404, not 403: B's existence is not disclosed");
    t.equal(one.body.code, 'NOT_FOUND');
    const missing = await aliceInA.get('organization.one', { organizationId: 'no-such-organization' });
    t.same(one.body, missing.body, 'the same answer as for an organization that does not exist');
    t.equal((await aliceInA.post('organization.update', { organizationId: orgB, name: 'Mine now' })).status, 404);
    t.equal((await aliceInA.post('organization.delete', { organizationId: orgB })).status, 404);
    t.equal((await aliceInA.post('organization.setDefault', { organizationId: orgB })).status, 404);
    t.equal((await aliceInA.post('user.createApiKey', { name: 'into B', metadata: { organizationId: orgB } })).status, 404);
    t.equal((await aliceInA.get('user.one', { userId: carol.userId })).status, 404, "nor see B's members");
    t.equal((await aliceInA.post('user.remove', { userId: carol.userId })).status, 404, 'nor remove them');
    t.equal((await aliceInA.post('organization.updateMemberRole', { memberId: carol.userId, role: 'admin' })).status, 404, 'nor change their role');
    t.notOk((await aliceInA.get('organization.all')).body.some((o: { id: string }) => o.id === orgB));
    t.equal((await bobInB.get('organization.one', { organizationId: orgB })).body.name, 'Bob Ltd', 'B is intact');
  });

  await t.test('an API key bound to B sees only B', async t => {
    const active = await bobInB.get('organization.active');
    t.equal(active.body.id, orgB);
    const members = await bobInB.get('user.all');
    t.same(members.body.map((m: { user: { email: string } }) => m.user.email).sort(), ['bob@example.com', 'carol@example.com'], "B's members only");
    t.ok(members.body.every((m: { organizationId: string }) => m.organizationId === orgB));
    t.equal((await bobInB.get('user.get')).body.role, 'owner', 'Bob owns B');
    t.equal((await bobInB.get('user.haveRootAccess')).body, true);

    const bobInA = await keyFor(server, bob.client, orgA, 'bob-a');
    t.equal((await bobInA.get('organization.active')).body.id, orgA, "Bob's key for A acts in A");
    t.equal((await bobInA.get('user.get')).body.role, 'member', 'where he is a plain member');
    t.notOk(
      (await bobInA.get('user.all')).body.some((m: { user: { email: string } }) => m.user.email === 'carol@example.com'),
      "and does not see B's members",
    );
    t.equal((await bobInA.get('user.one', { userId: carol.userId })).status, 404);
    t.equal((await bobInB.get('user.one', { userId: carol.userId })).status, 200);
    t.same(
      (await bobInA.get('organization.all')).body.map((o: { id: string }) => o.id),
      [orgA, orgB],
      'organization.all lists every organization Bob belongs to',
    );
  });

  await t.test("invitations of B are B's", async t => {
    const inv = await bobInB.post('organization.inviteMember', { email: 'dave@example.com', role: 'member' });
    t.equal(inv.status, 200);
    t.equal(inv.body.organizationId, orgB);
    t.same((await aliceInA.get('organization.allInvitations')).body, [], "A lists none of B's invitations");
    t.equal((await aliceInA.post('organization.removeInvitation', { invitationId: inv.body.id })).status, 404);
    const accepted = await new Client(server.url).post('auth.createUser', { id: inv.body.id, token: inv.body.token, password: 'dave-password' });
    t.equal(accepted.body.organizationId, orgB, 'the invited person joins B');
    const dave = new Client(server.url, { token: accepted.body.token });
    t.equal((await dave.get('organization.one', { organizationId: orgA })).status, 404, 'and cannot see A');
    t.same(
      (await dave.get('organization.all')).body.map((o: { id: string }) => o.id),
      [orgB],
    );
  });
});
