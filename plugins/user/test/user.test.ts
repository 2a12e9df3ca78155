// user.* over HTTP: the caller, the members of its organization, profile changes, removal
// and accounts created by admins.
import t from 'tap';
import { startTestServer, signUpAdmin, addMember, Client, type TestServer } from '@berth/core/testing';

const start = () => startTestServer({ plugins: ['auth', 'user', 'organization'], jobs: false });
const PASSWORD = 'correct horse battery';

/** A new account in the caller's organization, with a bearer token and an API key of its own (its client uses the key). */
const addUser = (server: TestServer, admin: Client, email: string, role: 'admin' | 'member' = 'member', password = 'member-password-1') => addMember(server, admin, email, role, password, 'apiKey');

/** The admin's own second organization, with a key acting in it. */
async function secondOrganization(server: TestServer, token: string, name: string) {
  const c = new Client(server.url, { token });
  const org = await c.post('organization.create', { name });
  const key = await c.post('user.createApiKey', { name, metadata: { organizationId: org.body.id } });
  return { organizationId: org.body.id as string, client: new Client(server.url, { apiKey: key.body.key }) };
}

const forbidden = { code: 'FORBIDDEN', message: String, issues: [] };

t.test('user operations', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'owner@example.com', PASSWORD);
  const anon = new Client(server.url);
  const member = await addUser(server, admin.client, 'member@example.com');
  const deputy = await addUser(server, admin.client, 'deputy@example.com', 'admin');

  t.test("user.get answers the caller's membership and account", async t => {
    const me = await admin.client.get('user.get');
    t.equal(me.status, 200);
    t.match(me.body, {
      id: String,
      userId: admin.userId,
      organizationId: admin.organizationId,
      role: 'owner',
      user: { id: admin.userId, email: 'owner@example.com', firstName: '', lastName: '', image: null, twoFactorEnabled: false },
    });
    t.same(
      Object.keys(me.body.user).sort(),
      [
        'allowImpersonation',
        'apiKeys',
        'createdAt',
        'email',
        'firstName',
        'id',
        'image',
        'isEnterpriseCloud',
        'lastName',
        'sendInvoiceNotifications',
        'serversQuantity',
        'stripeCustomerId',
        'stripeSubscriptionId',
        'twoFactorEnabled',
        'updatedAt',
      ],
      'no password hash, no TOTP secret',
    );
    t.same(
      me.body.user.apiKeys.map((k: { id: string; enabled: boolean }) => [typeof k.id, k.enabled]),
      [['string', true]],
      "the caller's API key, never the key itself",
    );
    t.notOk(JSON.stringify(me.body).includes(admin.apiKey), 'the key itself is nowhere in the answer');
    t.match(me.body, { canCreateProjects: true, canDeleteServices: true, accessedProjects: [], teamId: null, isDefault: Boolean }, "an owner has every grant of the peer's members");
    t.same((await anon.get('user.get', {}, { token: admin.token })).body, me.body, 'the same with the bearer token');
    t.same((await admin.client.trpc('query', 'user.get')).body, { result: { data: { json: me.body } } }, 'and on tRPC');
    t.match((await member.client.get('user.get')).body, {
      userId: member.userId,
      role: 'member',
      organizationId: admin.organizationId,
      user: { email: 'member@example.com' },
      canCreateProjects: false,
      canDeleteServices: false,
    });
    t.match((await deputy.client.get('user.get')).body, { role: 'admin' });
    const none = await anon.get('user.get');
    t.equal(none.status, 401);
    t.same(none.body, { code: 'UNAUTHORIZED', message: 'Authorization not provided', issues: [] });
  });

  t.test("user.one answers a member of the caller's organization, 404 for anyone else", async t => {
    const one = await member.client.get('user.one', { userId: admin.userId });
    t.equal(one.status, 200);
    t.match(one.body, { userId: admin.userId, role: 'owner', organizationId: admin.organizationId, user: { email: 'owner@example.com' } });
    const missing = await admin.client.get('user.one', { userId: 'no-such-user' });
    t.equal(missing.status, 404);
    t.match(missing.body, { code: 'NOT_FOUND', message: String, issues: [] });
    const required = await admin.client.get('user.one');
    t.equal(required.status, 400);
    t.same(
      required.body.issues.map((i: { path: string[] }) => i.path),
      [['userId']],
    );

    const elsewhere = await secondOrganization(server, admin.token, 'Elsewhere');
    const stranger = await addUser(server, elsewhere.client, 'stranger@example.com');
    t.equal((await admin.client.get('user.one', { userId: stranger.userId })).status, 404, 'a user of another organization is not found');
    t.equal((await stranger.client.get('user.one', { userId: member.userId })).status, 404, 'and the other way round');
    t.equal((await elsewhere.client.get('user.one', { userId: stranger.userId })).status, 200, 'though it is found from its own organization');
  });

  t.test("user.all lists the members of the caller's organization only", async t => {
    const elsewhere = await secondOrganization(server, admin.token, 'Outside');
    await addUser(server, elsewhere.client, 'outsider@example.com');
    const all = await member.client.get('user.all');
    t.equal(all.status, 200);
    t.same(
      all.body.map((m: { user: { email: string }; role: string }) => [m.user.email, m.role]),
      [
        ['owner@example.com', 'owner'],
        ['member@example.com', 'member'],
        ['deputy@example.com', 'admin'],
      ],
      'in the order they joined, with their roles',
    );
    t.ok(all.body.every((m: { organizationId: string }) => m.organizationId === admin.organizationId));
    t.notMatch(JSON.stringify(all.body), /outsider@example\.com|scrypt/, 'nobody of another organization, no password hash');
  });

  t.test('user.haveRootAccess is true for the owner only', async t => {
    t.same((await admin.client.get('user.haveRootAccess')).body, true);
    t.same((await deputy.client.get('user.haveRootAccess')).body, false, 'an admin is not the owner');
    t.same((await member.client.get('user.haveRootAccess')).body, false);
    t.equal((await anon.get('user.haveRootAccess')).status, 401);
  });

  t.test("user.update changes names; admins may change another member's", async t => {
    const mine = await member.client.post('user.update', { firstName: 'Ada', lastName: 'Lovelace' });
    t.equal(mine.status, 200);
    t.match(mine.body, { id: member.userId, firstName: 'Ada', lastName: 'Lovelace', email: 'member@example.com' }, 'the user, as the peer answers');
    t.match((await admin.client.get('user.one', { userId: member.userId })).body.user, { firstName: 'Ada', lastName: 'Lovelace' }, 'others see it');
    const partial = await member.client.post('user.update', { lastName: 'King' });
    t.match(partial.body, { firstName: 'Ada', lastName: 'King' }, 'fields left out are kept');

    const byAdmin = await deputy.client.post('user.update', { id: member.userId, firstName: 'Augusta' });
    t.equal(byAdmin.status, 200);
    t.equal(byAdmin.body.firstName, 'Augusta');
    t.equal((await member.client.get('user.get')).body.user.firstName, 'Augusta');

    const byMember = await member.client.post('user.update', { id: deputy.userId, firstName: 'Mallory' });
    t.equal(byMember.status, 403, 'a member changes only its own profile');
    t.match(byMember.body, forbidden);
    t.equal((await deputy.client.get('user.get')).body.user.firstName, '');
    t.equal((await admin.client.post('user.update', { id: 'no-such-user', firstName: 'x' })).status, 404);

    const badEmail = await member.client.post('user.update', { email: 'nope' });
    t.equal(badEmail.status, 400);
    t.same(
      badEmail.body.issues.map((i: { path: string[] }) => i.path),
      [['email']],
    );
    const shortPassword = await member.client.post('user.update', { password: 'short' });
    t.equal(shortPassword.status, 400);
    t.same(
      shortPassword.body.issues.map((i: { path: string[] }) => i.path),
      [['password']],
    );
    const taken = await member.client.post('user.update', { email: 'deputy@example.com' });
    t.equal(taken.status, 409);
    t.equal(taken.body.code, 'CONFLICT');
  });

  t.test("user.update: nobody but the owner changes the owner's account", async t => {
    const r = await deputy.client.post('user.update', { id: admin.userId, password: 'taken-over-pw' });
    t.equal(r.status, 403);
    t.match(r.body, forbidden);
    const names = await deputy.client.post('user.update', { id: admin.userId, firstName: 'Renamed' });
    t.equal(names.status, 403);
    t.equal((await anon.post('auth.login', { email: 'owner@example.com', password: PASSWORD })).status, 200, "the owner's password is unchanged");
    t.equal((await admin.client.get('user.get')).body.user.firstName, '');
    const own = await admin.client.post('user.update', { firstName: 'Grace' });
    t.equal(own.body.firstName, 'Grace', 'the owner itself may');
  });

  t.test('user.update: an admin cannot change the credentials of an account that is also in another organization', async t => {
    const both = await addUser(server, admin.client, 'both@example.com');
    const theirs = await new Client(server.url, { token: both.token }).post('organization.create', { name: 'Theirs' });
    t.equal(theirs.status, 200);
    const r = await deputy.client.post('user.update', { id: both.userId, password: 'reset-by-deputy' });
    t.equal(r.status, 403, 'its password would open the other organization too');
    t.equal((await deputy.client.post('auth.updateByAdmin', { id: both.userId, email: 'mine@example.com', password: null })).status, 403, 'nor through auth.updateByAdmin');
    t.equal((await anon.post('auth.login', { email: 'both@example.com', password: both.password })).status, 200, 'unchanged');
    t.equal((await deputy.client.post('user.update', { id: both.userId, firstName: 'Named' })).status, 200, "its profile in this organization is still the admin's to edit");
    const own = await both.client.post('user.update', { password: 'changed-by-holder', currentPassword: both.password });
    t.equal(own.status, 200, 'the holder changes its own password');
    t.equal((await anon.post('auth.login', { email: 'both@example.com', password: 'changed-by-holder' })).status, 200);
  });

  t.test('user.update with a new password: the next login needs it', async t => {
    const u = await addUser(server, admin.client, 'rotating@example.com');
    const without = await u.client.post('user.update', { password: 'rotated-password' });
    t.equal(without.status, 400, 'not without the current password');
    t.same(
      without.body.issues.map((i: any) => i.path.join('.')),
      ['currentPassword'],
      'naming currentPassword',
    );
    t.equal((await u.client.post('user.update', { password: 'rotated-password', currentPassword: u.password })).status, 200);
    t.equal((await anon.post('auth.login', { email: 'rotating@example.com', password: u.password })).status, 401);
    t.equal((await anon.post('auth.login', { email: 'rotating@example.com', password: 'rotated-password' })).status, 200);
    t.equal((await deputy.client.post('user.update', { id: u.userId, email: 'rotated@example.com' })).status, 200, 'an admin changes the address of an account of this organization only');
    t.equal((await anon.post('auth.login', { email: 'rotated@example.com', password: 'rotated-password' })).status, 200);
  });
});

t.test('user.remove', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'owner@example.com', PASSWORD);
  const anon = new Client(server.url);
  const deputy = await addUser(server, admin.client, 'deputy@example.com', 'admin');

  t.test('an admin removes a member: its key, its token and its login stop working', async t => {
    const leaving = await addUser(server, admin.client, 'leaving@example.com');
    t.equal((await leaving.client.get('user.get')).status, 200, 'the key works before');
    t.equal((await anon.get('auth.get', {}, { token: leaving.token })).status, 200, 'the token works before');
    const r = await deputy.client.post('user.remove', { userId: leaving.userId });
    t.equal(r.status, 200);
    t.equal(r.body, true);
    const byKey = await leaving.client.get('user.get');
    t.equal(byKey.status, 401, "the removed user's key is refused at once");
    t.equal(byKey.body.code, 'UNAUTHORIZED');
    t.equal((await anon.get('auth.get', {}, { token: leaving.token })).status, 401, 'so is its token');
    t.equal((await anon.post('auth.login', { email: 'leaving@example.com', password: leaving.password })).status, 401, 'the account belonged nowhere else: it is gone');
    t.notOk(
      (await admin.client.get('user.all')).body.some((m: { userId: string }) => m.userId === leaving.userId),
      'no longer listed',
    );
    t.equal((await admin.client.get('user.one', { userId: leaving.userId })).status, 404);
    t.equal((await admin.client.post('user.remove', { userId: leaving.userId })).status, 404, 'removing it twice');
    const again = await admin.client.post('user.createUserWithCredentials', { email: 'leaving@example.com', password: 'second-life-pw', role: 'member' });
    t.equal(again.status, 200, 'its address is free again');
  });

  t.test('an account that belongs elsewhere too keeps working there', async t => {
    const both = await addUser(server, admin.client, 'both@example.com');
    const own = await new Client(server.url, { token: both.token }).post('organization.create', { name: 'Own' });
    t.equal((await admin.client.post('user.remove', { userId: both.userId })).status, 200);
    t.equal((await both.client.get('user.get')).status, 401, 'its key for this organization is refused');
    const login = await anon.post('auth.login', { email: 'both@example.com', password: both.password });
    t.equal(login.status, 200, 'the account still logs in');
    t.equal(login.body.organizationId, own.body.id, 'into the organization it still belongs to');
    t.equal((await anon.get('organization.one', { organizationId: admin.organizationId }, { token: login.body.token })).status, 404, 'and no longer sees this one');
  });

  t.test('the owner cannot be removed, nor can one remove oneself; members cannot remove', async t => {
    const owner = await deputy.client.post('user.remove', { userId: admin.userId });
    t.equal(owner.status, 403);
    t.match(owner.body, forbidden);
    t.equal((await admin.client.get('user.get')).status, 200, 'the owner is still there');
    const self = await deputy.client.post('user.remove', { userId: deputy.userId });
    t.equal(self.status, 403);
    const member = await addUser(server, admin.client, 'plain@example.com');
    const byMember = await member.client.post('user.remove', { userId: deputy.userId });
    t.equal(byMember.status, 403, 'user.remove is for admins');
    t.same(byMember.body, { code: 'FORBIDDEN', message: 'Insufficient access', issues: [] });
    t.equal((await deputy.client.get('user.get')).status, 200, 'nobody was removed');
    t.equal((await anon.post('user.remove', { userId: member.userId })).status, 401);
    t.equal((await admin.client.post('user.remove', {})).status, 400, 'userId is required');
  });

  t.test('a member of another organization cannot be removed from here', async t => {
    const other = await secondOrganization(server, admin.token, 'Other');
    const stranger = await addUser(server, other.client, 'stranger@example.com');
    const r = await deputy.client.post('user.remove', { userId: stranger.userId });
    t.equal(r.status, 404);
    t.equal((await stranger.client.get('user.get')).status, 200, 'untouched');
  });
});

t.test('user.createUserWithCredentials', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'owner@example.com', PASSWORD);
  const anon = new Client(server.url);

  const created = await admin.client.post('user.createUserWithCredentials', { email: 'New@Example.com', password: 'new-user-password', role: 'member' });
  t.equal(created.status, 200);
  t.same(Object.keys(created.body).sort(), ['email', 'role', 'userId'], "the peer's answer: userId, email and role");
  t.match(created.body, { userId: String, role: 'member', email: 'new@example.com' });
  t.match((await admin.client.get('user.one', { userId: created.body.userId })).body, {
    organizationId: admin.organizationId,
    role: 'member',
    user: { email: 'new@example.com', firstName: '', twoFactorEnabled: false },
  });
  t.notMatch(JSON.stringify(created.body), /new-user-password|scrypt/, 'the password is not echoed');
  const login = await anon.post('auth.login', { email: 'new@example.com', password: 'new-user-password' });
  t.equal(login.status, 200, 'the account logs in with the given password');
  t.match(login.body, { id: created.body.userId, organizationId: admin.organizationId, user: { rol: 'user' } });

  const dup = await admin.client.post('user.createUserWithCredentials', { email: 'NEW@example.com', password: 'other-password', role: 'admin' });
  t.equal(dup.status, 409, 'a duplicate e-mail, whatever its case');
  t.match(dup.body, { code: 'CONFLICT', message: /new@example\.com/, issues: [] });
  t.same(Object.keys(dup.body).sort(), ['code', 'issues', 'message']);
  t.equal((await anon.post('auth.login', { email: 'new@example.com', password: 'other-password' })).status, 401, 'the existing account is untouched');

  const asAdmin = await admin.client.post('user.createUserWithCredentials', { email: 'second@example.com', password: 'second-password', role: 'admin' });
  t.equal(asAdmin.body.role, 'admin');
  const secondLogin = await anon.post('auth.login', { email: 'second@example.com', password: 'second-password' });
  t.equal(secondLogin.body.user.rol, 'admin');
  const second = new Client(server.url, { token: secondLogin.body.token });
  t.equal((await second.post('user.createUserWithCredentials', { email: 'third@example.com', password: 'third-password', role: 'member' })).status, 200, 'admins create accounts too');

  const member = new Client(server.url, { token: login.body.token });
  const denied = await member.post('user.createUserWithCredentials', { email: 'sneaky@example.com', password: 'sneaky-password', role: 'admin' });
  t.equal(denied.status, 403, 'members do not');
  t.match(denied.body, { code: 'FORBIDDEN', message: /^user\.createUserWithCredentials needs the permission member\.create/, issues: [] });
  t.equal((await anon.post('auth.login', { email: 'sneaky@example.com', password: 'sneaky-password' })).status, 401, 'and nothing was created');
  t.equal((await anon.post('user.createUserWithCredentials', { email: 'anon@example.com', password: 'anon-password', role: 'member' })).status, 401);

  const invalid = await admin.client.post('user.createUserWithCredentials', { email: 'bad', password: 'short', role: 'owner' });
  t.equal(invalid.status, 400);
  t.same(invalid.body.issues.map((i: { path: string[] }) => i.path.join('.')).sort(), ['email', 'password', 'role'], 'every violated constraint, by field');
  t.equal((await admin.client.post('user.createUserWithCredentials', { email: 'x@example.com', password: 'long-enough' })).body.issues[0].path[0], 'role', 'role is required');
});

t.test('user.generateToken gives a bearer token acting in the same organization', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'owner@example.com', PASSWORD);
  const other = await secondOrganization(server, admin.token, 'Second');
  const generated = await other.client.post('user.generateToken');
  t.equal(generated.status, 200);
  t.match(generated.body, { token: String });
  const byToken = new Client(server.url, { token: generated.body.token });
  t.equal((await byToken.get('user.get')).body.organizationId, other.organizationId, 'the organization of the credential that asked');
  t.equal((await byToken.get('organization.active')).body.name, 'Second');
});
