// API keys (user.createApiKey, getApiKeys, deleteApiKey): the key is shown once, works as
// x-api-key on both wire forms, acts in one organization, expires and can be revoked.
import t from 'tap';
import { startTestServer, signUpAdmin, waitFor, Client } from '@berth/core/testing';

const start = () => startTestServer({ plugins: ['auth', 'user', 'organization'], jobs: false });
const PASSWORD = 'correct horse battery';
const issuePaths = (r: { body: { issues: { path: (string | number)[] }[] } }) => r.body.issues.map(i => i.path.join('.')).sort();

t.test('API keys', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server, 'owner@example.com', PASSWORD);
  const anon = new Client(server.url);
  const owner = new Client(server.url, { token: admin.token });
  const create = (input: Record<string, unknown>, c = owner) => c.post('user.createApiKey', { metadata: { organizationId: admin.organizationId }, ...input });

  t.test('createApiKey answers the plain key once, with its id, name and start', async t => {
    const r = await create({ name: 'deploy bot', metadata: { organizationId: admin.organizationId, purpose: 'ci' } });
    t.equal(r.status, 200);
    t.match(r.body, {
      key: String,
      id: String,
      apiKeyId: r.body.id,
      name: 'deploy bot',
      prefix: null,
      start: String,
      userId: admin.userId,
      organizationId: admin.organizationId,
      metadata: { organizationId: admin.organizationId, purpose: 'ci' },
      expiresAt: null,
    });
    t.match(
      r.body,
      {
        configId: 'default',
        referenceId: admin.userId,
        enabled: true,
        rateLimitEnabled: false,
        rateLimitTimeWindow: null,
        rateLimitMax: null,
        refillInterval: null,
        refillAmount: null,
        lastRefillAt: null,
        requestCount: null,
        remaining: null,
        lastRequest: null,
        permissions: null,
        updatedAt: r.body.createdAt,
      },
      "the peer's API-key row: no rate limit or quota, never used yet",
    );
    t.ok(r.body.key.length >= 32, 'a long random key');
    t.ok(r.body.key.startsWith(r.body.start), 'start is the beginning of the key');
    t.ok(r.body.start.length < r.body.key.length / 2, 'and only a small part of it');
    const second = await create({ name: 'deploy bot' });
    t.not(second.body.key, r.body.key, 'every key is new, even with the same name');
    t.not(second.body.id, r.body.id);

    const prefixed = await create({ name: 'prefixed', prefix: 'brt_' });
    t.equal(prefixed.status, 200);
    t.match(prefixed.body, { prefix: 'brt_', key: /^brt_/ });
    t.equal((await anon.get('user.get', {}, { apiKey: prefixed.body.key })).status, 200, 'a prefixed key works');
  });

  t.test('the key works as x-api-key on REST and on tRPC', async t => {
    const { key } = (await create({ name: 'both forms' })).body;
    const c = new Client(server.url, { apiKey: key });
    const rest = await c.get('user.get');
    t.equal(rest.status, 200);
    t.match(rest.body, { userId: admin.userId, organizationId: admin.organizationId, role: 'owner' });
    const trpc = await c.trpc('query', 'user.get');
    t.equal(trpc.status, 200);
    t.same(trpc.body, { result: { data: { json: rest.body } } });
    const mutation = await c.trpc('mutation', 'organization.create', { name: 'via tRPC' });
    t.equal(mutation.status, 200, 'mutations too');
    t.equal(mutation.body.result.data.json.name, 'via tRPC');
    const wrong = await new Client(server.url, { apiKey: `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}` }).trpc('query', 'user.get');
    t.equal(wrong.status, 401, 'one character off is refused');
    t.equal(wrong.body.error.json.data.code, 'UNAUTHORIZED');
  });

  t.test("getApiKeys lists the caller's keys without the keys or their hashes", async t => {
    const made = await create({ name: 'listed', prefix: 'lst_', expiresIn: 3600 });
    const list = await owner.get('user.getApiKeys');
    t.equal(list.status, 200);
    const item = list.body.find((k: { id: string }) => k.id === made.body.id);
    t.ok(item, 'the new key is listed');
    t.match(item, { name: 'listed', prefix: 'lst_', start: made.body.start, userId: admin.userId, organizationId: admin.organizationId, expiresAt: String });
    const expiresIn = Date.parse(item.expiresAt) - Date.now();
    t.ok(expiresIn > 3500_000 && expiresIn <= 3600_000, 'expiresAt is an hour from now');
    t.same(Object.keys(item).sort(), ['apiKeyId', 'createdAt', 'expiresAt', 'id', 'lastUsedAt', 'metadata', 'name', 'organizationId', 'prefix', 'start', 'userId']);
    const text = JSON.stringify(list.body);
    t.notOk(text.includes(made.body.key), 'the plain key is never shown again');
    t.notOk(text.includes(made.body.key.slice(made.body.start.length)), 'nor its secret part');
    t.notMatch(text, /"[0-9a-f]{64}"/, 'nor anything like its hash');
    t.ok(list.body.every((k: { userId: string }) => k.userId === admin.userId));
  });

  t.test('deleteApiKey revokes a key at once', async t => {
    const made = (await create({ name: 'short-lived' })).body;
    const c = new Client(server.url, { apiKey: made.key });
    t.equal((await c.get('user.get')).status, 200, 'used just before');
    const del = await owner.post('user.deleteApiKey', { apiKeyId: made.id });
    t.equal(del.status, 200);
    t.equal(del.body, true);
    const after = await c.get('user.get');
    t.equal(after.status, 401, 'the deleted key gives 401');
    t.same(after.body, { code: 'UNAUTHORIZED', message: String(after.body.message), issues: [] });
    t.notOk(
      (await owner.get('user.getApiKeys')).body.some((k: { id: string }) => k.id === made.id),
      'and is no longer listed',
    );
    t.equal((await owner.post('user.deleteApiKey', { apiKeyId: made.id })).status, 404, 'deleting it twice');
    t.equal((await owner.post('user.deleteApiKey', {})).status, 400, 'apiKeyId is required');
    const self = (await create({ name: 'self-revoking' })).body;
    const selfClient = new Client(server.url, { apiKey: self.key });
    t.equal((await selfClient.post('user.deleteApiKey', { apiKeyId: self.id })).status, 200, 'a key may revoke itself');
    t.equal((await selfClient.get('user.get')).status, 401);
  });

  t.test('expiresIn: a key stops working when it expires, even one in use', async t => {
    // The expiry is checked against the clock, which a test cannot set: a few seconds of life
    // (room for a slow first call on a busy machine), then polling for the refusal.
    const before = Date.now();
    const made = await create({ name: 'a few seconds', expiresIn: 5 });
    const after = Date.now();
    t.equal(made.status, 200);
    const expiresAt = Date.parse(made.body.expiresAt);
    t.ok(expiresAt >= before + 5000 && expiresAt <= after + 5000, 'expiresAt is expiresIn seconds after the call');
    const c = new Client(server.url, { apiKey: made.body.key });
    t.equal((await c.get('user.get')).status, 200, 'it works at first');
    const late = await waitFor(
      'the expired key to be refused',
      async () => {
        const r = await c.get('user.get');
        return r.status !== 200 && r;
      },
      { timeout: 60_000, interval: 250 },
    );
    t.ok(Date.now() >= expiresAt, 'refused only once its time has come');
    t.equal(late.status, 401, 'after its time it gives 401');
    t.equal(late.body.code, 'UNAUTHORIZED');
    t.equal((await c.trpc('query', 'user.get')).status, 401, 'on tRPC too');
    const zero = await create({ name: 'zero', expiresIn: 0 });
    t.equal(zero.status, 400, 'expiresIn is at least 1 second');
    t.same(issuePaths(zero), ['expiresIn']);
  });

  t.test('a key acts in an organization its holder belongs to', async t => {
    const theirs = await create({ name: 'foreign', metadata: { organizationId: 'not-my-organization' } });
    t.equal(theirs.status, 404, 'an organization the caller is not a member of is not found');
    t.equal(theirs.body.code, 'NOT_FOUND');

    // An organization that exists, but belongs to someone else.
    const other = await owner.post('user.createUserWithCredentials', { email: 'other@example.com', password: 'other-password', role: 'member' });
    t.equal(other.status, 200);
    const otherLogin = await anon.post('auth.login', { email: 'other@example.com', password: 'other-password' });
    const otherOrg = await anon.post('organization.create', { name: 'Not yours' }, { token: otherLogin.body.token });
    t.equal(otherOrg.status, 200);
    const foreign = await create({ name: 'foreign', metadata: { organizationId: otherOrg.body.id } });
    t.equal(foreign.status, 404, 'nor one of somebody else');
    t.equal((await anon.post('user.createApiKey', { name: 'x', metadata: { organizationId: otherOrg.body.id } }, { token: otherLogin.body.token })).status, 200, 'its owner may');
  });

  t.test('input limits: name at most 32 characters, metadata required', async t => {
    const long = await create({ name: 'x'.repeat(33) });
    t.equal(long.status, 400);
    t.equal(long.body.code, 'BAD_REQUEST');
    t.same(issuePaths(long), ['name']);
    t.match(long.body.issues[0].message, /^name: /);
    t.equal((await create({ name: 'x'.repeat(32) })).status, 200, '32 is fine');
    t.same(issuePaths(await create({ name: '' })), ['name'], 'and at least one');

    const noMetadata = await owner.post('user.createApiKey', { name: 'no metadata' });
    t.equal(noMetadata.status, 400);
    t.same(issuePaths(noMetadata), ['metadata']);
    t.match(noMetadata.body.issues[0].message, /^metadata: /);
    const noOrg = await owner.post('user.createApiKey', { name: 'no org', metadata: {} });
    t.same(issuePaths(noOrg), ['metadata.organizationId']);
    const badPrefix = await create({ name: 'bad prefix', prefix: 'no spaces!' });
    t.same(issuePaths(badPrefix), ['prefix']);
    const viaTrpc = await owner.trpc('mutation', 'user.createApiKey', { name: 'x'.repeat(40) });
    t.equal(viaTrpc.status, 400, 'the same on tRPC');
    t.same(viaTrpc.body.error.json.data.issues.map((i: { path: string[] }) => i.path.join('.')).sort(), ['metadata', 'name']);
    t.equal((await anon.post('user.createApiKey', { name: 'anon', metadata: { organizationId: admin.organizationId } })).status, 401);
  });

  t.test('keys are personal: another user neither sees nor deletes mine', async t => {
    const mine = (await create({ name: 'mine' })).body;
    await owner.post('user.createUserWithCredentials', { email: 'deputy@example.com', password: 'deputy-password', role: 'admin' });
    const deputyLogin = await anon.post('auth.login', { email: 'deputy@example.com', password: 'deputy-password' });
    const deputy = new Client(server.url, { token: deputyLogin.body.token });
    const theirs = await create({ name: 'theirs' }, deputy);
    t.equal(theirs.status, 200);
    t.equal(theirs.body.userId, deputyLogin.body.id);
    t.same(
      (await deputy.get('user.getApiKeys')).body.map((k: { name: string }) => k.name),
      ['theirs'],
      'the other user lists only its own key',
    );
    const del = await deputy.post('user.deleteApiKey', { apiKeyId: mine.id });
    t.equal(del.status, 404, 'even an admin cannot delete my key: it is not found');
    t.equal(del.body.code, 'NOT_FOUND');
    t.equal((await anon.get('user.get', {}, { apiKey: mine.key })).status, 200, 'my key still works');
    t.ok((await owner.get('user.getApiKeys')).body.some((k: { id: string }) => k.id === mine.id));
    const byTheirKey = await anon.get('user.get', {}, { apiKey: theirs.body.key });
    t.equal(byTheirKey.body.userId, deputyLogin.body.id, 'a key acts as the user who made it');
    t.equal(byTheirKey.body.role, 'admin');
  });

  t.test("a key follows its holder's role as it changes", async t => {
    await owner.post('user.createUserWithCredentials', { email: 'rising@example.com', password: 'rising-password', role: 'member' });
    const login = await anon.post('auth.login', { email: 'rising@example.com', password: 'rising-password' });
    const key = (await create({ name: 'rising' }, new Client(server.url, { token: login.body.token }))).body.key;
    const c = new Client(server.url, { apiKey: key });
    const invite = () => c.post('organization.inviteMember', { email: 'x@example.com', role: 'member' });
    t.equal((await invite()).status, 403, "a member's key cannot invite");
    t.equal((await owner.post('organization.updateMemberRole', { memberId: login.body.id, role: 'admin' })).status, 200);
    t.equal((await invite()).status, 200, 'promoted, the same key can');
    t.equal((await owner.post('organization.updateMemberRole', { memberId: login.body.id, role: 'member' })).status, 200);
    t.equal((await invite()).status, 403, 'demoted, it cannot any more');
  });
});
