// The HTTP contract every operation shares: both transports, both credentials, the error
// bodies, validation of every constraint kind, malformed and oversized bodies.
import t from 'tap';
import { startTestServer, signUpAdmin, Client, type Reply, type TestServer } from '@berth/core/testing';
import { examplePlugin, faultyPlugin } from './helpers.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUpAdmin>>;

t.before(async () => {
  server = await startTestServer({ extraPlugins: [examplePlugin], bodyLimit: 64 * 1024 });
  admin = await signUpAdmin(server);
});
t.teardown(() => server.destroy());

t.test('REST and tRPC forms reach the same procedure', async t => {
  const created = await admin.client.post('project.create', { name: 'shop' });
  t.equal(created.status, 200);
  const projectId = created.body.project.projectId;

  const rest = await admin.client.get('project.one', { projectId });
  t.equal(rest.status, 200);
  t.equal(rest.body.name, 'shop');

  const trpcGet = await admin.client.trpc('query', 'project.one', { projectId });
  t.equal(trpcGet.status, 200);
  t.same(trpcGet.body, { result: { data: { json: rest.body } } });

  // GET ?input= without the json wrapper
  const bare = await admin.client.raw(`/api/trpc/project.one?input=${encodeURIComponent(JSON.stringify({ projectId }))}`, { headers: { 'x-api-key': admin.apiKey } });
  t.equal(bare.body.result.data.json.projectId, projectId);

  const trpcPost = await admin.client.trpc('mutation', 'project.update', { projectId, description: 'via trpc' });
  t.equal(trpcPost.status, 200);
  t.equal((await admin.client.get('project.one', { projectId })).body.description, 'via trpc');

  // A read may also be POSTed with a JSON body.
  const postedRead = await admin.client.post('project.one', { projectId });
  t.equal(postedRead.body.projectId, projectId);

  // tRPC batching: two procedures, one request, one answer each.
  const batch = await admin.client.raw(`/api/trpc/project.one,user.get?batch=1&input=${encodeURIComponent(JSON.stringify({ 0: { json: { projectId } }, 1: { json: {} } }))}`, {
    headers: { 'x-api-key': admin.apiKey },
  });
  t.equal(batch.status, 200);
  t.equal(batch.body.length, 2);
  t.equal(batch.body[0].result.data.json.projectId, projectId);
  t.equal(batch.body[1].result.data.json.userId, admin.userId);
});

t.test('query strings: + and %20 both decode to spaces, numbers are coerced', async t => {
  await admin.client.post('project.create', { name: 'big data lake' });
  const plus = await admin.client.raw('/api/project.search?q=data+lake&limit=5', { headers: { 'x-api-key': admin.apiKey } });
  const pct = await admin.client.raw('/api/project.search?q=data%20lake&limit=5', { headers: { 'x-api-key': admin.apiKey } });
  t.equal(plus.status, 200);
  t.same(
    plus.body.items.map((p: { name: string }) => p.name),
    ['big data lake'],
  );
  t.same(pct.body, plus.body);
  const bad = await admin.client.get('project.search', { limit: 'many' });
  t.equal(bad.status, 400);
  t.same(
    bad.body.issues.map((i: { path: string[] }) => i.path),
    [['limit']],
  );
});

t.test('both credentials work on every route; none or a wrong one is 401', async t => {
  const byKey = await admin.client.get('project.all');
  const byToken = await new Client(server.url, { token: admin.token }).get('project.all');
  t.equal(byKey.status, 200);
  t.equal(byToken.status, 200);
  t.same(byKey.body, byToken.body);

  const none = await new Client(server.url).get('project.all');
  t.equal(none.status, 401);
  t.same(none.body, { code: 'UNAUTHORIZED', message: 'Authorization not provided', issues: [] });

  const wrongKey = await new Client(server.url, { apiKey: 'not-a-key' }).get('project.all');
  t.equal(wrongKey.status, 401);
  t.equal(wrongKey.body.code, 'UNAUTHORIZED');
  const wrongToken = await new Client(server.url, { token: 'nope' }).trpc('query', 'project.all');
  t.equal(wrongToken.status, 401);
  t.equal(wrongToken.body.error.json.data.code, 'UNAUTHORIZED');
  t.equal(wrongToken.body.error.json.data.httpStatus, 401);
});

t.test('403 for a member calling an admin operation', async t => {
  const created = await admin.client.post('user.createUserWithCredentials', { email: 'dev@example.com', password: 'dev-password-1', role: 'member' });
  t.equal(created.status, 200);
  const login = await new Client(server.url).post('auth.login', { email: 'dev@example.com', password: 'dev-password-1' });
  const member = new Client(server.url, { token: login.body.token });
  t.equal((await member.get('project.all')).status, 200, 'members read');
  const denied = await member.post('project.create', { name: 'not mine to make' });
  t.equal(denied.status, 403);
  t.match(denied.body, { code: 'FORBIDDEN', message: /^project\.create needs the permission project\.create, which your role \(member\) does not give/, issues: [] });
});

t.test('404 for a missing record and for an unknown operation', async t => {
  const missing = await admin.client.get('project.one', { projectId: 'does-not-exist' });
  t.equal(missing.status, 404);
  t.equal(missing.body.code, 'NOT_FOUND');
  t.same(missing.body.issues, []);
  const missingPost = await admin.client.post('project.remove', { projectId: 'does-not-exist' });
  t.equal(missingPost.status, 404);
  const unknownOp = await admin.client.get('project.teleport');
  t.equal(unknownOp.status, 404);
  t.equal(unknownOp.body.code, 'NOT_FOUND');
  const unknownTrpc = await admin.client.trpc('query', 'nothing.here');
  t.equal(unknownTrpc.status, 404);
  t.equal(unknownTrpc.body.error.json.data.code, 'NOT_FOUND');
  const wrongMethod = await admin.client.get('project.create', { name: 'x' });
  t.equal(wrongMethod.status, 404, 'a mutation has no GET form');
});

t.test('409 on a conflict', async t => {
  const body = { email: 'twice@example.com', password: 'password-twice', role: 'member' };
  t.equal((await admin.client.post('user.createUserWithCredentials', body)).status, 200);
  const again = await admin.client.post('user.createUserWithCredentials', body);
  t.equal(again.status, 409);
  t.equal(again.body.code, 'CONFLICT');
  t.match(again.body.message, /twice@example.com/);
});

const issuesOf = (r: { body: { issues?: { path: (string | number)[]; message: string }[] } }) => r.body.issues ?? [];
const paths = (r: Parameters<typeof issuesOf>[0]) =>
  issuesOf(r)
    .map(i => i.path.join('.'))
    .sort();

t.test('validation: one issue per violated constraint, each naming its field', async t => {
  const c = admin.client;
  const cases: [string, string, unknown, string[]][] = [
    ['required', 'user.createApiKey', { name: 'k' }, ['metadata']],
    ['required (nested)', 'user.createApiKey', { name: 'k', metadata: {} }, ['metadata.organizationId']],
    ['min length', 'organization.create', { name: '' }, ['name']],
    ['length range (max)', 'user.createApiKey', { name: 'x'.repeat(33), metadata: { organizationId: admin.organizationId } }, ['name']],
    ['pattern', 'user.createApiKey', { name: 'k', prefix: 'has space', metadata: { organizationId: admin.organizationId } }, ['prefix']],
    ['enum', 'organization.inviteMember', { email: 'x@example.com', role: 'emperor' }, ['role']],
    ['e-mail format', 'auth.login', { email: 'not-an-address', password: 'long enough' }, ['email']],
    ['URI format', 'bookmark.create', { url: 'not a uri', title: 'runbook' }, ['url']],
    ['numeric minimum', 'bookmark.create', { url: 'https://example.com', title: 'a', weight: -1 }, ['weight']],
    ['numeric range (max)', 'bookmark.create', { url: 'https://example.com', title: 'a', weight: 11 }, ['weight']],
    ['integer', 'bookmark.create', { url: 'https://example.com', title: 'a', weight: 1.5 }, ['weight']],
    ['nullability (null where not allowed)', 'organization.create', { name: null }, ['name']],
    ['type', 'project.create', { name: 42 }, ['name']],
    ['several at once', 'bookmark.create', { url: 'nope', title: '', weight: 99 }, ['title', 'url', 'weight']],
  ];
  const answers: { kind: string; expected: string[]; r: Reply }[] = [];
  for (const [kind, op, input, expected] of cases) answers.push({ kind, expected, r: await c.post(op, input) });
  // One assertion per behaviour; a failure lists the constraint kinds that break it.
  t.same(
    answers.filter(({ r }) => r.status !== 400).map(({ kind, r }) => `${kind}: ${r.status}`),
    [],
    'every violation is a 400',
  );
  t.same(
    answers.filter(({ r }) => r.body.code !== 'BAD_REQUEST' || r.body.message !== 'Invalid input data').map(({ kind, r }) => `${kind}: ${r.body.code} ${r.body.message}`),
    [],
    'with code BAD_REQUEST and the message "Invalid input data"',
  );
  t.same(
    answers
      .filter(({ r, expected }) => JSON.stringify(paths(r)) !== JSON.stringify(expected))
      .map(({ kind, r, expected }) => `${kind}: issues at [${paths(r).join(', ')}], not [${expected.join(', ')}]`),
    [],
    'one issue per violated constraint, at its field',
  );
  t.same(
    answers.flatMap(({ kind, r }) =>
      issuesOf(r)
        .filter(i => !i.message.startsWith(`${i.path.join('.')}: `))
        .map(i => `${kind}: ${JSON.stringify(i.message)}`),
    ),
    [],
    "each issue's message starts with its field",
  );
  // nullable fields accept null
  const nullable = await c.post('project.create', { name: 'nullable', description: null });
  t.equal(nullable.status, 200, 'null accepted where the spec says S|null');
  t.equal(nullable.body.project.description, null);
  // tRPC carries the same issues
  const viaTrpc = await c.trpc('mutation', 'organization.create', { name: '' });
  t.equal(viaTrpc.status, 400);
  t.same(
    viaTrpc.body.error.json.data.issues.map((i: { path: string[] }) => i.path),
    [['name']],
  );
});

t.test('unknown fields are ignored', async t => {
  const r = await admin.client.post('project.create', { name: 'extra', color: 'blue', organizationId: 'someone-else' });
  t.equal(r.status, 200);
  t.equal(r.body.project.organizationId, admin.organizationId, 'cannot be smuggled into another organization');
  t.notOk('color' in r.body.project);
});

t.test('malformed JSON is a 400; an oversized body is a 413; an empty POST is no input', async t => {
  const h = { 'x-api-key': admin.apiKey, 'content-type': 'application/json' };
  const bad = await admin.client.raw('/api/project.create', { method: 'POST', headers: h, body: '{"name": "x",' });
  t.equal(bad.status, 400);
  t.equal(bad.body.code, 'BAD_REQUEST');
  t.match(bad.body.message, /JSON/);
  const badTrpc = await admin.client.raw('/api/trpc/project.all?input=%7Bnope', { headers: { 'x-api-key': admin.apiKey } });
  t.equal(badTrpc.status, 400);
  const big = await admin.client.raw('/api/project.create', { method: 'POST', headers: h, body: JSON.stringify({ name: 'x'.repeat(100 * 1024) }) });
  t.equal(big.status, 413);
  t.equal(big.body.code, 'PAYLOAD_TOO_LARGE');
  const empty = await admin.client.raw('/api/auth.verifyToken', { method: 'POST', headers: h, body: '' });
  t.equal(empty.status, 200);
  t.equal(empty.body, true);
  const noBody = await admin.client.post('auth.verifyToken');
  t.equal(noBody.status, 200);
});

t.test('an unexpected failure is a 500 with a generic message; details stay in the log', async t => {
  const faultyServer = await startTestServer({ plugins: ['auth', 'user'], extraPlugins: [faultyPlugin] });
  t.teardown(() => faultyServer.destroy());
  const { client } = await signUpAdmin(faultyServer);
  const r = await client.get('faulty.boom');
  t.equal(r.status, 500);
  t.same(r.body, { code: 'INTERNAL_SERVER_ERROR', message: 'Internal server error', issues: [] });
  const viaTrpc = await client.trpc('query', 'faulty.boom');
  t.equal(viaTrpc.status, 500);
  t.notMatch(JSON.stringify(viaTrpc.body), /hunter2/);
  // With checkResponses on (as in every test), a reply that breaks its schema is caught.
  const off = await client.get('faulty.offSchema');
  t.equal(off.status, 500);
  t.match(off.body.message, /does not match its output schema/);
});
