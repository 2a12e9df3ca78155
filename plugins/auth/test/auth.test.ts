// auth.* over HTTP: the first admin, logins and bearer tokens, account changes, roles,
// invitations and input validation, against a real kernel and PostgreSQL.
import t from 'tap';
import { startTestServer, signUpAdmin, addMember, Client, type TestServer } from '@berth/core/testing';

// No job scheduler: these tests need none, and it would keep the process alive after stop.
const start = () => startTestServer({ plugins: ['auth', 'user', 'organization'], jobs: false });
const PASSWORD = 'correct horse battery';

const addUser = addMember;

const unauthorizedBody = { code: 'UNAUTHORIZED', message: String, issues: [] };
const forbiddenBody = { code: 'FORBIDDEN', message: String, issues: [] };
const issuePaths = (r: { body: { issues: { path: (string | number)[] }[] } }) => r.body.issues.map(i => i.path.join('.')).sort();

t.test('createAdmin: the first admin needs no credentials, every later one needs an admin', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const anon = new Client(server.url);

  const first = await anon.post('auth.createAdmin', { email: 'Owner@Example.com', password: PASSWORD });
  t.equal(first.status, 200);
  t.match(first.body, {
    token: String,
    id: String,
    organizationId: String,
    is2FAEnabled: false,
    user: { id: first.body.id, userId: first.body.id, email: 'owner@example.com', rol: 'admin', organizationId: first.body.organizationId, secret: null, token: null, is2FAEnabled: false },
  });
  const owner = new Client(server.url, { token: first.body.token });
  const me = await owner.get('auth.get');
  t.equal(me.status, 200, 'the answered token is a working bearer token');
  t.equal(me.body.id, first.body.id);

  const second = await anon.post('auth.createAdmin', { email: 'intruder@example.com', password: PASSWORD });
  t.equal(second.status, 401, 'no second admin without credentials');
  t.match(second.body, unauthorizedBody);
  t.same(Object.keys(second.body).sort(), ['code', 'issues', 'message']);
  const stale = await anon.post('auth.createAdmin', { email: 'intruder@example.com', password: PASSWORD }, { token: 'not-a-token' });
  t.equal(stale.status, 401, 'a wrong credential is no better than none');
  const tried = await anon.post('auth.login', { email: 'intruder@example.com', password: PASSWORD });
  t.equal(tried.status, 401, 'the refused admin was not created');

  const added = await owner.post('auth.createAdmin', { email: 'second-admin@example.com', password: 'second-admin-pw' });
  t.equal(added.status, 200, 'an admin adds another admin');
  t.match(added.body, { token: null, organizationId: first.body.organizationId, user: { email: 'second-admin@example.com', rol: 'admin' } });
  t.not(added.body.id, first.body.id);
  const login = await anon.post('auth.login', { email: 'second-admin@example.com', password: 'second-admin-pw' });
  t.equal(login.status, 200, 'the added admin can log in');
  t.equal(login.body.organizationId, first.body.organizationId, 'in the organization of the admin who added it');
  t.equal(login.body.user.rol, 'admin');

  const dup = await owner.post('auth.createAdmin', { email: 'SECOND-admin@example.com', password: 'another-password' });
  t.equal(dup.status, 409, 'e-mail addresses are unique, whatever their case');
  t.equal(dup.body.code, 'CONFLICT');

  const member = await addUser(server, owner, 'member@example.com');
  const byMember = await member.client.post('auth.createAdmin', { email: 'made-by-member@example.com', password: PASSWORD });
  t.equal(byMember.status, 403, 'a plain user cannot create admins');
  t.match(byMember.body, forbiddenBody);
});

t.test('createAdmin: of concurrent first calls exactly one wins, the others are refused like a later call', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const anon = new Client(server.url);
  const replies = await Promise.all([0, 1, 2, 3, 4].map(i => anon.post('auth.createAdmin', { email: `racer${i}@example.com`, password: PASSWORD })));
  const winners = replies.filter(r => r.status === 200);
  t.equal(winners.length, 1, 'exactly one 200');
  t.same(
    replies.filter(r => r.status !== 200).map(r => r.status),
    [401, 401, 401, 401],
    'the others: 401, as for any call without credentials',
  );
  for (const r of replies.filter(r => r.status !== 200)) t.match(r.body, unauthorizedBody);

  const winner = winners[0]!.body;
  const members = await new Client(server.url, { token: winner.token }).get('user.all');
  t.equal(members.status, 200);
  t.same(
    members.body.map((m: { user: { email: string } }) => m.user.email),
    [winner.user.email],
    'one account, in one organization',
  );
  for (let i = 0; i < 5; i++) {
    const email = `racer${i}@example.com`;
    const login = await anon.post('auth.login', { email, password: PASSWORD });
    t.equal(login.status, email === winner.user.email ? 200 : 401, `${email} ${email === winner.user.email ? 'exists' : 'was not created'}`);
  }
});

t.test('login, tokens and logout', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'admin@example.com', PASSWORD);
  const anon = new Client(server.url);

  t.test('login with the right password answers a working bearer token', async t => {
    const login = await anon.post('auth.login', { email: 'admin@example.com', password: PASSWORD });
    t.equal(login.status, 200);
    t.match(login.body, { token: String, is2FAEnabled: false, id: admin.userId, organizationId: admin.organizationId, user: { email: 'admin@example.com', rol: 'admin' } });
    t.not(login.body.token, admin.token, 'every login gets its own token');
    const me = await anon.get('auth.get', {}, { token: login.body.token });
    t.equal(me.status, 200);
    t.equal(me.body.id, admin.userId);
    const upper = await anon.post('auth.login', { email: 'ADMIN@Example.COM', password: PASSWORD });
    t.equal(upper.status, 200, 'the e-mail address is matched without regard to case');
  });

  t.test('a wrong password and an unknown e-mail get the same 401', async t => {
    const wrong = await anon.post('auth.login', { email: 'admin@example.com', password: 'wrong password' });
    t.equal(wrong.status, 401);
    t.match(wrong.body, unauthorizedBody);
    t.equal(wrong.body.token, undefined, 'no token');
    const unknown = await anon.post('auth.login', { email: 'nobody@example.com', password: 'wrong password' });
    t.equal(unknown.status, 401);
    t.same(unknown.body, wrong.body, 'nothing tells whether the account exists');
    const caseOfPassword = await anon.post('auth.login', { email: 'admin@example.com', password: PASSWORD.toUpperCase() });
    t.equal(caseOfPassword.status, 401, 'passwords are case-sensitive');
  });

  t.test('a stale bearer token does not stop a login', async t => {
    const login = await anon.post('auth.login', { email: 'admin@example.com', password: PASSWORD }, { token: 'revoked-or-bogus' });
    t.equal(login.status, 200);
  });

  t.test('the bearer token and the API key are accepted by every operation', async t => {
    const login = await anon.post('auth.login', { email: 'admin@example.com', password: PASSWORD });
    const token = login.body.token;
    const doc = await anon.get('settings.getOpenApiDocument', {}, { token });
    t.equal(doc.status, 200);
    const ops = Object.entries(doc.body.paths as Record<string, Record<string, { security?: unknown[] }>>)
      .flatMap(([p, methods]) => Object.entries(methods).map(([method, op]) => ({ op: p.slice(1), method, isPublic: Array.isArray(op.security) && op.security.length === 0 })))
      .filter(o => o.op !== 'auth.logout'); // it would revoke the token under test; see below
    t.ok(ops.length >= 30, `${ops.length} operations in the document`);
    t.ok(ops.some(o => o.op === 'organization.updateMemberRole') && ops.some(o => o.op === 'auth.verifyLogin2FA'));
    for (const { op, method, isPublic } of ops) {
      const call = (o: { token?: string; apiKey?: string }) => (method === 'get' ? anon.get(op, {}, o) : anon.post(op, {}, o));
      const byToken = await call({ token });
      const byKey = await call({ apiKey: admin.apiKey });
      t.not(byToken.status, 401, `${op} accepts the bearer token (${byToken.status})`);
      t.not(byKey.status, 401, `${op} accepts the API key (${byKey.status})`);
      // Turning two-factor off and making recovery codes need a recent login: an API key is none.
      if (op === 'auth.disable2FA' || op === 'auth.generateRecoveryCodes') t.equal(byKey.status, 403, `${op}: an API key is no recent login`);
      else t.equal(byToken.status, byKey.status, `${op}: both credentials get the same answer`);
      if (!isPublic) t.equal((await call({})).status, 401, `${op} refuses a call without credentials`);
    }
    const trpc = await anon.trpc('query', 'auth.get', undefined, { token });
    t.equal(trpc.status, 200, 'and on the tRPC form');
    t.equal(trpc.body.result.data.json.id, admin.userId);
  });

  t.test('logout revokes the token of the call, and only that one', async t => {
    const one = (await anon.post('auth.login', { email: 'admin@example.com', password: PASSWORD })).body.token;
    const two = (await anon.post('auth.login', { email: 'admin@example.com', password: PASSWORD })).body.token;
    t.equal((await anon.get('auth.get', {}, { token: one })).status, 200, 'used just before logging out');
    const out = await anon.post('auth.logout', undefined, { token: one });
    t.equal(out.status, 200);
    t.equal(out.body, true);
    const after = await anon.get('auth.get', {}, { token: one });
    t.equal(after.status, 401, 'the next call with it is refused');
    t.match(after.body, unauthorizedBody);
    t.equal((await anon.post('auth.verifyToken', undefined, { token: one })).status, 401);
    t.equal((await anon.post('auth.logout', undefined, { token: one })).status, 401, 'a revoked token cannot log out again');
    t.equal((await anon.get('auth.get', {}, { token: two })).status, 200, 'another login of the same account still works');
    t.equal((await anon.get('auth.get', {}, { apiKey: admin.apiKey })).status, 200, 'API keys are untouched');
    t.equal((await anon.post('auth.logout')).status, 401, 'logout without a credential');
  });

  t.test('generateToken gives a further token that outlives a logout of the session', async t => {
    const session = (await anon.post('auth.login', { email: 'admin@example.com', password: PASSWORD })).body.token;
    const generated = await anon.post('auth.generateToken', undefined, { token: session });
    t.equal(generated.status, 200);
    t.match(generated.body, { token: String });
    const long = generated.body.token;
    t.not(long, session);
    t.equal((await anon.post('auth.logout', undefined, { token: session })).status, 200);
    t.equal((await anon.get('auth.get', {}, { token: session })).status, 401);
    const me = await anon.get('auth.get', {}, { token: long });
    t.equal(me.status, 200, 'the generated token still works');
    t.equal(me.body.id, admin.userId);
    const user = await anon.get('user.get', {}, { token: long });
    t.equal(user.body.organizationId, admin.organizationId, 'and acts in the same organization');
    const byKey = await anon.post('auth.generateToken', undefined, { apiKey: admin.apiKey });
    t.equal(byKey.status, 200, 'an API key can also get a token');
    t.equal((await anon.post('auth.verifyToken', undefined, { token: byKey.body.token })).body, true);
    t.equal((await anon.post('auth.generateToken')).status, 401);
  });

  t.test('verifyToken: true for a valid credential, 401 otherwise', async t => {
    const byToken = await anon.post('auth.verifyToken', undefined, { token: admin.token });
    t.equal(byToken.status, 200);
    t.equal(byToken.body, true);
    t.equal((await anon.post('auth.verifyToken', undefined, { apiKey: admin.apiKey })).body, true);
    const none = await anon.post('auth.verifyToken');
    t.equal(none.status, 401);
    t.match(none.body, unauthorizedBody);
    const bogus = await anon.post('auth.verifyToken', undefined, { token: `${admin.token}x` });
    t.equal(bogus.status, 401);
    const viaTrpc = await anon.trpc('mutation', 'auth.verifyToken', undefined, { token: admin.token });
    t.same(viaTrpc.body, { result: { data: { json: true } } });
  });

  t.test('a session token is not an API key', async t => {
    t.equal((await anon.get('auth.get', {}, { token: admin.token })).status, 200, 'used as a bearer token');
    const asKey = await anon.get('auth.get', {}, { apiKey: admin.token });
    t.equal(asKey.status, 401, 'the same value in x-api-key is refused');
  });
});

t.test('the account: auth.get, auth.update, auth.one, auth.updateByAdmin', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'admin@example.com', PASSWORD);
  const anon = new Client(server.url);
  const owner = new Client(server.url, { token: admin.token });

  t.test('auth.get answers the caller and never a secret', async t => {
    const me = await owner.get('auth.get');
    t.equal(me.status, 200);
    t.same(Object.keys(me.body).sort(), ['createdAt', 'email', 'id', 'image', 'is2FAEnabled', 'organizationId', 'rol', 'secret', 'token', 'userId']);
    t.match(me.body, {
      id: admin.userId,
      userId: admin.userId,
      email: 'admin@example.com',
      rol: 'admin',
      image: null,
      secret: null,
      token: null,
      is2FAEnabled: false,
      organizationId: admin.organizationId,
    });
    t.ok(!Number.isNaN(Date.parse(me.body.createdAt)), 'createdAt is a date');
    t.notMatch(JSON.stringify(me.body), /scrypt/, 'no password hash');
    t.equal((await anon.get('auth.get')).status, 401);
  });

  t.test("auth.update changes the caller's e-mail and password", async t => {
    const u = await addUser(server, admin.client, 'changer@example.com');
    const without = await u.client.post('auth.update', { email: null, password: 'brand-new-password' });
    t.equal(without.status, 400, 'a new password needs the current one');
    t.same(
      without.body.issues.map((i: any) => i.path.join('.')),
      ['currentPassword'],
      'naming currentPassword',
    );
    const wrong = await u.client.post('auth.update', { email: null, password: 'brand-new-password', currentPassword: 'not-the-password' });
    t.equal(wrong.status, 400, 'and the right one');
    const updated = await u.client.post('auth.update', { email: 'Changed@Example.com', password: 'brand-new-password', currentPassword: u.password, image: 'https://example.com/me.png' });
    t.equal(updated.status, 200);
    t.match(updated.body, { id: u.userId, email: 'changed@example.com', image: 'https://example.com/me.png', rol: 'user' });
    t.equal((await anon.post('auth.login', { email: 'changer@example.com', password: u.password })).status, 401, 'the old e-mail no longer logs in');
    t.equal((await anon.post('auth.login', { email: 'changed@example.com', password: u.password })).status, 401, 'nor the old password');
    const login = await anon.post('auth.login', { email: 'changed@example.com', password: 'brand-new-password' });
    t.equal(login.status, 200, 'the new e-mail and password do');
    t.equal(login.body.id, u.userId);
    t.equal((await u.client.get('auth.get')).status, 200, 'the token the change was made with still works');

    const nothing = await u.client.post('auth.update', { email: null, password: null });
    t.equal(nothing.status, 200, 'null e-mail and password change nothing');
    t.equal(nothing.body.email, 'changed@example.com');
    t.equal((await anon.post('auth.login', { email: 'changed@example.com', password: 'brand-new-password' })).status, 200);
  });

  t.test("auth.update cannot raise the caller's role or take another address", async t => {
    const u = await addUser(server, admin.client, 'climber@example.com');
    const r = await u.client.post('auth.update', { email: null, password: null, rol: 'admin', is2FAEnabled: true, id: admin.userId });
    t.equal(r.status, 200);
    t.match(r.body, { id: u.userId, rol: 'user', is2FAEnabled: false }, "rol, is2FAEnabled and id are not the caller's to set");
    t.equal((await owner.get('auth.get')).body.email, 'admin@example.com', 'the admin named by id is untouched');
    t.equal((await u.client.post('user.createUserWithCredentials', { email: 'x@example.com', password: PASSWORD, role: 'member' })).status, 403, 'still not an admin');
    const taken = await u.client.post('auth.update', { email: 'admin@example.com', password: null });
    t.equal(taken.status, 409, 'an address in use is a conflict');
    t.equal(taken.body.code, 'CONFLICT');
    const short = await u.client.post('auth.update', { email: null, password: 'short' });
    t.equal(short.status, 400, 'a new password is at least 8 characters');
    t.same(issuePaths(short), ['password']);
    const badEmail = await u.client.post('auth.update', { email: 'not an address', password: null });
    t.equal(badEmail.status, 400);
    t.same(issuePaths(badEmail), ['email']);
    t.equal((await anon.post('auth.login', { email: 'climber@example.com', password: u.password })).status, 200, 'nothing changed');
  });

  t.test("auth.one answers a user of the caller's organization", async t => {
    const u = await addUser(server, admin.client, 'someone@example.com');
    const one = await owner.get('auth.one', { id: u.userId });
    t.equal(one.status, 200);
    t.match(one.body, { id: u.userId, email: 'someone@example.com', rol: 'user', organizationId: admin.organizationId, secret: null, token: null });
    const self = await u.client.get('auth.one', { id: admin.userId });
    t.match(self.body, { id: admin.userId, rol: 'admin' }, 'members see each other');
    const missing = await owner.get('auth.one', { id: 'no-such-user' });
    t.equal(missing.status, 404);
    t.equal(missing.body.code, 'NOT_FOUND');
    t.equal((await owner.get('auth.one')).status, 400, 'id is required');

    // An account of another instance-wide organization is not visible.
    const other = await owner.post('organization.create', { name: 'Elsewhere' });
    const key = await owner.post('user.createApiKey', { name: 'elsewhere', metadata: { organizationId: other.body.id } });
    const elsewhere = new Client(server.url, { apiKey: key.body.key });
    const stranger = await addUser(server, elsewhere, 'stranger@example.com');
    const hidden = await u.client.get('auth.one', { id: stranger.userId });
    t.equal(hidden.status, 404, 'a user of another organization is not found');
  });

  t.test('auth.updateByAdmin: a user made "user" gets 403 on admin operations, and back', async t => {
    const u = await addUser(server, admin.client, 'deputy@example.com', 'admin');
    t.equal((await u.client.get('auth.get')).body.rol, 'admin');
    const invite = () => u.client.post('organization.inviteMember', { email: 'guest@example.com', role: 'member' });
    t.equal((await invite()).status, 200, 'an admin may invite');

    const demoted = await owner.post('auth.updateByAdmin', { id: u.userId, email: null, password: null, rol: 'user' });
    t.equal(demoted.status, 200);
    t.match(demoted.body, { id: u.userId, rol: 'user' });
    t.equal((await owner.get('auth.one', { id: u.userId })).body.rol, 'user');
    t.equal((await u.client.get('auth.get')).body.rol, 'user', 'the user sees its new role at once');
    for (const [op, input] of [
      ['organization.inviteMember', { email: 'guest2@example.com', role: 'member' }],
      ['user.createUserWithCredentials', { email: 'made@example.com', password: PASSWORD, role: 'member' }],
      ['auth.updateByAdmin', { id: admin.userId, email: null, password: null }],
      ['user.remove', { userId: admin.userId }],
    ] as const) {
      const r = await u.client.post(op, input);
      t.equal(r.status, 403, `${op}: 403`);
      // user.remove is an owner's and admin's (access), the others need a permission a member is not given.
      t.match(r.body, { code: 'FORBIDDEN', message: op === 'user.remove' ? 'Insufficient access' : new RegExp(`^${op} needs the permission member\\.`), issues: [] }, `${op}: FORBIDDEN body`);
    }
    const denied = await u.client.get('organization.allInvitations');
    t.equal(denied.status, 403, 'admin-only reads too');
    t.equal((await u.client.get('user.get')).status, 200, 'member operations still work');

    const restored = await owner.post('auth.updateByAdmin', { id: u.userId, email: null, password: null, rol: 'admin' });
    t.equal(restored.body.rol, 'admin');
    t.equal((await invite()).status, 200, 'promoted again, it may invite again');
  });

  t.test("auth.updateByAdmin changes another user's e-mail and password", async t => {
    const u = await addUser(server, admin.client, 'forgetful@example.com');
    const r = await owner.post('auth.updateByAdmin', { id: u.userId, email: 'remembered@example.com', password: 'reset-by-admin' });
    t.equal(r.status, 200);
    t.match(r.body, { id: u.userId, email: 'remembered@example.com', rol: 'user' }, 'the role is kept when rol is absent');
    t.equal((await anon.post('auth.login', { email: 'remembered@example.com', password: 'reset-by-admin' })).status, 200);
    t.equal((await anon.post('auth.login', { email: 'forgetful@example.com', password: u.password })).status, 401);
    const short = await owner.post('auth.updateByAdmin', { id: u.userId, email: null, password: 'short' });
    t.equal(short.status, 400);
    t.same(issuePaths(short), ['password']);
    const missing = await owner.post('auth.updateByAdmin', { id: 'no-such-user', email: null, password: null, rol: 'admin' });
    t.equal(missing.status, 404);
    const empty = await owner.post('auth.updateByAdmin', { id: '', email: null, password: null });
    t.equal(empty.status, 400, 'id must not be empty');
    t.same(issuePaths(empty), ['id']);
  });

  t.test("auth.updateByAdmin: an admin cannot take over the owner's account or change its role", async t => {
    const deputy = await addUser(server, admin.client, 'ambitious@example.com', 'admin');
    const takeover = await deputy.client.post('auth.updateByAdmin', { id: admin.userId, email: 'mine-now@example.com', password: 'taken-over-pw' });
    t.equal(takeover.status, 403);
    t.match(takeover.body, forbiddenBody);
    const demote = await deputy.client.post('auth.updateByAdmin', { id: admin.userId, email: null, password: null, rol: 'user' });
    t.equal(demote.status, 403);
    t.equal((await anon.post('auth.login', { email: 'admin@example.com', password: PASSWORD })).status, 200, "the owner's credentials are unchanged");
    t.equal((await owner.get('auth.get')).body.rol, 'admin');
  });
});

t.test('validation of account input', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const anon = new Client(server.url);
  const cases: [string, string, unknown, string[]][] = [
    ['createAdmin: e-mail format', 'auth.createAdmin', { email: 'not-an-address', password: PASSWORD }, ['email']],
    ['createAdmin: password min 8', 'auth.createAdmin', { email: 'a@example.com', password: '1234567' }, ['password']],
    ['createAdmin: both', 'auth.createAdmin', { email: 'a@', password: 'short' }, ['email', 'password']],
    ['createAdmin: both missing', 'auth.createAdmin', {}, ['email', 'password']],
    ['login: e-mail format', 'auth.login', { email: 'admin.example.com', password: PASSWORD }, ['email']],
    ['login: password min 8', 'auth.login', { email: 'a@example.com', password: 'short' }, ['password']],
    ['login: password type', 'auth.login', { email: 'a@example.com', password: 12345678 }, ['password']],
    ['createUser: password min 8, token min 1, id required', 'auth.createUser', { password: 'short', token: '' }, ['id', 'password', 'token']],
    ['verifyLogin2FA: pin min 6', 'auth.verifyLogin2FA', { id: 'x', pin: '123' }, ['pin']],
  ];
  for (const [what, op, input, expected] of cases) {
    const r = await anon.post(op, input);
    t.equal(r.status, 400, `${what}: 400`);
    t.equal(r.body.code, 'BAD_REQUEST', `${what}: code`);
    t.same(issuePaths(r), expected, `${what}: the issues name ${expected.join(', ')}`);
    for (const issue of r.body.issues) t.match(issue.message, new RegExp(`^${issue.path.join('\\.')}: `), `${what}: the message names the field`);
  }
  const tooShort = await anon.post('auth.createAdmin', { email: 'a@example.com', password: '1234567' });
  t.equal((await anon.post('auth.login', { email: 'a@example.com', password: '12345678' })).status, 401, 'nothing was created by the refused call');
  t.equal(tooShort.body.message, 'Invalid input data');
  const exactly8 = await anon.post('auth.createAdmin', { email: 'a@example.com', password: '12345678' });
  t.equal(exactly8.status, 200, 'eight characters are enough');
});

t.test('invitations: organization.inviteMember and auth.createUser', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'admin@example.com', PASSWORD);
  const anon = new Client(server.url);

  t.test('an invited person sets a password and joins the organization as a user', async t => {
    const inv = await admin.client.post('organization.inviteMember', { email: 'Newcomer@Example.com', role: 'member' });
    t.equal(inv.status, 200);
    t.match(inv.body, { id: String, invitationId: inv.body.id, token: String, email: 'newcomer@example.com', role: 'member', status: 'pending', organizationId: admin.organizationId });
    t.ok(Date.parse(inv.body.expiresAt) > Date.now(), 'expires in the future');

    const wrong = await anon.post('auth.createUser', { id: inv.body.id, token: `${inv.body.token}x`, password: 'newcomer-password' });
    t.equal(wrong.status, 401, 'a wrong token is refused');
    t.match(wrong.body, unauthorizedBody);
    const wrongId = await anon.post('auth.createUser', { id: 'no-such-invitation', token: inv.body.token, password: 'newcomer-password' });
    t.equal(wrongId.status, 401, 'so is an unknown invitation id');
    t.equal((await anon.post('auth.login', { email: 'newcomer@example.com', password: 'newcomer-password' })).status, 401, 'no account yet');

    const accepted = await anon.post('auth.createUser', { id: inv.body.id, token: inv.body.token, password: 'newcomer-password' });
    t.equal(accepted.status, 200);
    t.match(accepted.body, { token: String, id: String, organizationId: admin.organizationId, user: { email: 'newcomer@example.com', rol: 'user' } });
    const me = await anon.get('auth.get', {}, { token: accepted.body.token });
    t.equal(me.status, 200, 'the answered token works');
    t.match(me.body, { id: accepted.body.id, email: 'newcomer@example.com', rol: 'user', organizationId: admin.organizationId });
    const login = await anon.post('auth.login', { email: 'newcomer@example.com', password: 'newcomer-password' });
    t.equal(login.status, 200, 'the new account can log in');
    t.equal(login.body.organizationId, admin.organizationId);
    const members = await admin.client.get('user.all');
    t.ok(
      members.body.some((m: { userId: string; role: string }) => m.userId === accepted.body.id && m.role === 'member'),
      'the admin sees the new member',
    );

    const again = await anon.post('auth.createUser', { id: inv.body.id, token: inv.body.token, password: 'another-password' });
    t.equal(again.status, 401, 'an invitation is used once');
    t.equal((await anon.post('auth.login', { email: 'newcomer@example.com', password: 'another-password' })).status, 401, 'and the second try changed no password');
  });

  t.test('an invitation as admin gives the admin role', async t => {
    const inv = await admin.client.post('organization.inviteMember', { email: 'helper@example.com', role: 'admin' });
    const accepted = await anon.post('auth.createUser', { id: inv.body.id, token: inv.body.token, password: 'helper-password' });
    t.equal(accepted.status, 200);
    t.equal(accepted.body.user.rol, 'admin');
    const helper = new Client(server.url, { token: accepted.body.token });
    t.equal((await helper.get('organization.allInvitations')).status, 200, 'and admin operations');
  });

  t.test('allInvitations lists them with their state; removeInvitation cancels one', async t => {
    const taken = await admin.client.post('organization.inviteMember', { email: 'taken@example.com', role: 'member' });
    t.equal((await anon.post('auth.createUser', { id: taken.body.id, token: taken.body.token, password: 'taken-password' })).status, 200);
    const inv = await admin.client.post('organization.inviteMember', { email: 'maybe@example.com', role: 'member' });
    const all = await admin.client.get('organization.allInvitations');
    t.equal(all.status, 200);
    const byEmail = Object.fromEntries(all.body.map((i: { email: string; status: string }) => [i.email, i.status]));
    t.match(byEmail, { 'taken@example.com': 'accepted', 'maybe@example.com': 'pending' });
    t.ok(
      all.body.every((i: { organizationId: string }) => i.organizationId === admin.organizationId),
      "the organization's own only",
    );
    for (const token of [taken.body.token, inv.body.token]) t.notMatch(JSON.stringify(all.body), token, 'the list never shows a token');
    t.ok(all.body.every((i: object) => !('token' in i) && !('tokenHash' in i)));

    const removed = await admin.client.post('organization.removeInvitation', { invitationId: inv.body.id });
    t.equal(removed.status, 200);
    t.equal(removed.body, true);
    const after = await admin.client.get('organization.allInvitations');
    t.equal(after.body.find((i: { id: string }) => i.id === inv.body.id).status, 'canceled');
    const late = await anon.post('auth.createUser', { id: inv.body.id, token: inv.body.token, password: 'maybe-password' });
    t.equal(late.status, 401, 'a canceled invitation cannot be accepted');
    t.equal((await admin.client.post('organization.removeInvitation', { invitationId: 'no-such-invitation' })).status, 404);
  });

  t.test('invitations belong to one organization and to its admins', async t => {
    const member = await addUser(server, admin.client, 'plain@example.com');
    const r = await member.client.post('organization.inviteMember', { email: 'friend@example.com', role: 'admin' });
    t.equal(r.status, 403, 'a plain member cannot invite');
    t.match(r.body, forbiddenBody);
    t.equal((await member.client.get('organization.allInvitations')).status, 403);

    const inv = await admin.client.post('organization.inviteMember', { email: 'contested@example.com', role: 'member' });
    const other = await new Client(server.url, { token: admin.token }).post('organization.create', { name: 'Other' });
    const key = await admin.client.post('user.createApiKey', { name: 'other', metadata: { organizationId: other.body.id } });
    const inOther = new Client(server.url, { apiKey: key.body.key });
    t.same((await inOther.get('organization.allInvitations')).body, [], 'another organization lists none of them');
    t.equal((await inOther.post('organization.removeInvitation', { invitationId: inv.body.id })).status, 404, 'nor can it cancel one');
    t.equal((await admin.client.get('organization.allInvitations')).body.find((i: { id: string }) => i.id === inv.body.id).status, 'pending');
  });

  t.test("accepting an invitation for an existing account needs that account's password", async t => {
    // Someone with an account who owns an organization of their own, and no longer belongs to this one.
    const victim = await addUser(server, admin.client, 'victim@example.com', 'member', 'victim-password');
    const own = await victim.client.post('organization.create', { name: 'Victim Inc' });
    t.equal(own.status, 200);
    t.equal((await admin.client.post('user.remove', { userId: victim.userId })).status, 200);

    const inv = await admin.client.post('organization.inviteMember', { email: 'victim@example.com', role: 'member' });
    const hijack = await anon.post('auth.createUser', { id: inv.body.id, token: inv.body.token, password: 'chosen-by-the-inviter' });
    t.equal(hijack.status, 401, 'whoever holds the invitation token gets no session for the existing account');
    t.match(hijack.body, unauthorizedBody);
    t.equal(hijack.body.token, undefined);
    t.equal((await anon.post('auth.login', { email: 'victim@example.com', password: 'chosen-by-the-inviter' })).status, 401, 'nor its password');

    const rightful = await anon.post('auth.createUser', { id: inv.body.id, token: inv.body.token, password: 'victim-password' });
    t.equal(rightful.status, 200, "with the account's own password the invitation is accepted");
    t.equal(rightful.body.id, victim.userId);
    t.equal(rightful.body.organizationId, admin.organizationId, 'the session acts in the inviting organization');
    const orgs = await anon.get('organization.all', {}, { token: rightful.body.token });
    t.same(orgs.body.map((o: { name: string }) => o.name).sort(), ['My Organization', 'Victim Inc'], 'the account now belongs to both');
    t.equal((await anon.post('auth.login', { email: 'victim@example.com', password: 'victim-password' })).status, 200, 'the password is unchanged');
  });
});
