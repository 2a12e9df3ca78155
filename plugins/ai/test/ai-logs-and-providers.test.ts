// ai.analyzeLogs, ai.getEnabledProviders, ai.getCustomProviders and ai.saveCustomProviders on a
// real kernel against the loopback language-model service (llm-stand-in.ts), on both wire forms
// (REST and tRPC): a log analysis asked of the organization's configuration and quoting the failing
// line, a disabled configuration refused naming aiId, a provider's refusal quoted with the key
// redacted; the enabled configurations listed without URL or key; the organization's allowed AI
// services stored in order, each URL checked as a configuration's (outboundAllow), then binding
// ai.create and ai.update (403 for another URL) until the list is emptied; members read, admins
// save; bad input named by its field; another organization reaches none of it.
import t from 'tap';
import pg from 'pg';
import { addMember, otherOrganization, signUpAdmin, startTestServer, TEST_BASE_IMAGE, type Client, type Reply } from '@berth/core/testing';
import { GOOD_KEY, startLlmStandIn } from './llm-stand-in.ts';

t.setTimeout(300_000);

const llm = await startLlmStandIn(TEST_BASE_IMAGE);
t.teardown(() => llm.close());
const server = await startTestServer({ proxy: 'none', jobs: false, aiTimeoutSeconds: 20, outboundAllow: [`127.0.0.1:${llm.port}`] } as never);
t.teardown(() => server.destroy());
const admin = await signUpAdmin(server);
const c = admin.client;
const member = await addMember(server, c, 'reader@example.com');
const apiUrl = `${llm.url}/v1`;

/** The answer's data on either wire form. */
const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);
/** Both wire forms of one call: REST (GET query string / POST body) and tRPC. */
const both = (client: Client, kind: 'query' | 'mutation', op: string, input?: Record<string, unknown>) =>
  Promise.all([kind === 'query' ? client.get(op, input) : client.post(op, input ?? {}), client.trpc(kind, op, input)]);
/** Whether a 400 names the field in its issues. */
const names = (r: Reply, field: string) => {
  const issues = r.body?.issues ?? r.body?.error?.json?.data?.issues ?? r.body?.error?.json?.issues ?? [];
  return r.status === 400 && issues.some((i: any) => i.path?.[0] === field);
};

const made = await c.post('ai.create', { name: 'Stand-in', apiUrl, apiKey: GOOD_KEY, model: 'gpt-test', isEnabled: true });
const aiId: string = made.body.aiId;

const FAILING_LOG = ['#1 building', 'Step 3/5 : RUN npm ci', 'npm ERR! error code ECONNREFUSED while fetching left-pad', 'The command returned a non-zero code: 1'].join('\n');

t.test("analyzeLogs: the organization's model reads the log, on both wire forms", async t => {
  t.equal(made.status, 200, JSON.stringify(made.body));
  for (const [form, r] of (await both(c, 'mutation', 'ai.analyzeLogs', { aiId, logs: FAILING_LOG, context: 'build' })).entries()) {
    t.equal(r.status, 200, `${form ? 'tRPC' : 'REST'}: ${JSON.stringify(r.body).slice(0, 300)}`);
    t.match(data(r), { analysis: /## Summary[\s\S]*npm ERR! error code ECONNREFUSED while fetching left-pad[\s\S]*## What to do/ }, 'the analysis quotes the failing line');
    t.notOk(JSON.stringify(r.body).includes(GOOD_KEY), 'the key is not answered');
  }
  const asked = llm.requests.filter(r => r.path === '/v1/chat/completions').at(-1)!;
  t.equal(asked.body.model, 'gpt-test', "the configuration's model");
  t.equal(asked.headers.authorization, `Bearer ${GOOD_KEY}`, 'its key, opened for the call');
  t.notOk(asked.body.response_format, 'free text, no schema');
  t.match(asked.body.messages[0], { role: 'system', content: /logs of a deployment's build and start/ });
  t.match(asked.body.messages.at(-1).content, /^The build logs:\n#1 building/, 'the log goes as the user part');

  const runtime = await c.post('ai.analyzeLogs', { aiId, logs: 'listening on :8080\nGET / 200', context: 'runtime' });
  t.match(runtime, { status: 200, body: { analysis: 'ok' } }, "a healthy log: the model's short answer");
  t.match(llm.requests.at(-1)!.body.messages[0].content, /logs of a running container/);

  const asMember = await member.client.post('ai.analyzeLogs', { aiId, logs: FAILING_LOG, context: 'runtime' });
  t.equal(asMember.status, 200, 'a member may ask (as the peer: any signed-in user of the organization)');
});

t.test('analyzeLogs: what cannot be analysed is a 400 saying why', async t => {
  const silent = await c.post('ai.analyzeLogs', { aiId, logs: 'scenario:silent', context: 'build' });
  t.match(silent, { status: 400, body: { message: 'The AI provider (OpenAI-compatible) answered no text' } });

  const wrong = await c.post('ai.create', { name: 'revoked', apiUrl, apiKey: 'sk-revoked-abcdef0123456789', model: 'gpt-test', isEnabled: true });
  for (const [form, r] of (await both(c, 'mutation', 'ai.analyzeLogs', { aiId: wrong.body.aiId, logs: FAILING_LOG, context: 'build' })).entries()) {
    t.equal(r.status, 400, `${form ? 'tRPC' : 'REST'}: a provider's 401 is a 400`);
    t.match(JSON.stringify(r.body), /The AI provider \(OpenAI-compatible\) answered 401: Incorrect API key provided: \[redacted\]/);
    t.notOk(JSON.stringify(r.body).includes('sk-revoked'), 'the key is redacted');
  }

  await c.post('ai.update', { aiId: wrong.body.aiId, isEnabled: false });
  const disabled = await c.post('ai.analyzeLogs', { aiId: wrong.body.aiId, logs: FAILING_LOG, context: 'build' });
  t.match(disabled, { status: 400, body: { message: 'AI provider is not enabled', issues: [{ path: ['aiId'], message: /aiId: the AI configuration is not enabled/ }] } });
  t.equal((await c.post('ai.analyzeLogs', { aiId: 'nosuchconfiguration', logs: 'x', context: 'build' })).status, 404);
  await c.post('ai.delete', { aiId: wrong.body.aiId });
});

t.test('analyzeLogs: bad input is a 400 naming its field', async t => {
  const good = { aiId, logs: FAILING_LOG, context: 'build' };
  const before = llm.requests.length;
  t.ok(names(await c.post('ai.analyzeLogs', { ...good, context: 'deploy' }), 'context'), 'context: build or runtime');
  t.ok(names(await c.post('ai.analyzeLogs', { ...good, logs: '' }), 'logs'), 'logs: not empty');
  t.ok(names(await c.post('ai.analyzeLogs', { ...good, logs: 'x'.repeat(500_001) }), 'logs'), 'logs: at most 500,000 characters');
  t.ok(names(await c.post('ai.analyzeLogs', { logs: 'x', context: 'build' }), 'aiId'), 'aiId: required');
  t.ok(names(await c.post('ai.analyzeLogs', { ...good, aiId: 'a'.repeat(256) }), 'aiId'), 'aiId: at most 255 characters');
  t.ok(names(await c.trpc('mutation', 'ai.analyzeLogs', { ...good, context: 7 }), 'context'), 'the tRPC form names it too');
  t.equal(llm.requests.length, before, 'nothing was sent to the model');
});

t.test('getEnabledProviders: the enabled configurations, newest first, without URL or key', async t => {
  const off = await c.post('ai.create', { name: 'Switched off', apiUrl, apiKey: GOOD_KEY, model: 'gpt-test', isEnabled: false });
  const newer = await c.post('ai.create', { name: 'Newer', apiUrl, apiKey: GOOD_KEY, model: 'gpt-test-2', isEnabled: true });
  t.teardown(async () => {
    await c.post('ai.delete', { aiId: off.body.aiId });
    await c.post('ai.delete', { aiId: newer.body.aiId });
  });
  const replies = [...(await both(c, 'query', 'ai.getEnabledProviders')), ...(await both(member.client, 'query', 'ai.getEnabledProviders'))];
  for (const [i, r] of replies.entries()) {
    t.equal(r.status, 200, `${i > 1 ? 'a member' : 'the admin'}, ${i % 2 ? 'tRPC' : 'REST'}`);
    t.same(data(r), [
      { aiId: newer.body.aiId, name: 'Newer', model: 'gpt-test-2' },
      { aiId, name: 'Stand-in', model: 'gpt-test' },
    ]);
    t.notOk(JSON.stringify(r.body).includes(GOOD_KEY) || JSON.stringify(r.body).includes(llm.url), 'no key and no URL');
  }
});

t.test("saveCustomProviders: the organization's allowed services bind ai.create and ai.update", async t => {
  for (const r of await both(member.client, 'query', 'ai.getCustomProviders')) t.match(r, { status: 200 }, 'a member reads the list');
  t.same(data((await both(c, 'query', 'ai.getCustomProviders'))[1]), [], 'none at first');
  t.equal((await member.client.post('ai.saveCustomProviders', { providers: [] })).status, 403, 'a member does not save it');

  const providers = [
    { name: 'Internal LLM', apiUrl: `${apiUrl}/` },
    { name: 'Public gateway', apiUrl: 'https://llm-gateway.example.com/v1' },
  ];
  const [rest, trpc] = await both(c, 'mutation', 'ai.saveCustomProviders', { providers });
  const stored = [
    { name: 'Internal LLM', apiUrl },
    { name: 'Public gateway', apiUrl: 'https://llm-gateway.example.com/v1' },
  ];
  t.match(rest, { status: 200 }, JSON.stringify(rest.body));
  t.same(rest.body, stored, 'answered as stored: without the trailing slash');
  t.same(data(trpc), stored, 'the tRPC form saves the same list');
  for (const r of await both(c, 'query', 'ai.getCustomProviders')) t.same(data(r), stored, 'read back in order');
  const db = new pg.Client(server.database);
  await db.connect();
  t.teardown(() => db.end());
  const rows = await db.query('select position, name, api_url from ai_custom_providers where organization_id = $1 order by position', [admin.organizationId]);
  t.same(
    rows.rows.map(r => [r.position, r.name]),
    [
      [0, 'Internal LLM'],
      [1, 'Public gateway'],
    ],
    'one row per service, replaced by the second save',
  );

  const elsewhere = await c.post('ai.create', { name: 'elsewhere', apiUrl: 'https://api.openai.com/v1', apiKey: 'k', model: 'm', isEnabled: true });
  t.match(elsewhere, { status: 403, body: { code: 'FORBIDDEN', message: /This API URL is not in your organization's allowed AI providers: apiUrl https:\/\/api\.openai\.com\/v1/ } });
  t.equal((await c.post('ai.update', { aiId, apiUrl: 'https://api.openai.com/v1' })).status, 403, 'ai.update to an unlisted URL');
  const listed = await c.post('ai.create', { name: 'listed', apiUrl: `${apiUrl}///`, apiKey: GOOD_KEY, model: 'gpt-test', isEnabled: true });
  t.equal(listed.status, 200, 'a listed URL (however many trailing slashes)');
  await c.post('ai.delete', { aiId: listed.body.aiId });
  t.equal((await c.post('ai.update', { aiId, name: 'Stand-in' })).status, 200, 'an update that keeps the URL');

  t.same((await c.post('ai.saveCustomProviders', { providers: [] })).body, [], 'emptied');
  const anyUrl = await c.post('ai.create', { name: 'anywhere', apiUrl: 'https://llm.example.org/v1', apiKey: 'k', model: 'm', isEnabled: false });
  t.equal(anyUrl.status, 200, 'without a list any URL the instance reaches is taken again');
  await c.post('ai.delete', { aiId: anyUrl.body.aiId });
});

t.test("saveCustomProviders: every URL is checked as a configuration's is, bad input named", async t => {
  const loopback = await c.post('ai.saveCustomProviders', {
    providers: [
      { name: 'ok', apiUrl },
      { name: 'here', apiUrl: 'http://127.0.0.1:1/v1' },
    ],
  });
  t.match(loopback, { status: 400, body: { issues: [{ path: ['providers', '1', 'apiUrl'], message: /providers\.1\.apiUrl: points at 127\.0\.0\.1, a loopback address.*outboundAllow/ }] } });
  const credentials = await c.post('ai.saveCustomProviders', { providers: [{ name: 'creds', apiUrl: 'https://user:pw@llm.example.com/v1' }] });
  t.match(credentials, { status: 400, body: { issues: [{ path: ['providers', '0', 'apiUrl'] }] } }, 'no user or password in the URL');
  t.ok(names(await c.post('ai.saveCustomProviders', { providers: [{ name: '', apiUrl }] }), 'providers'), 'a name is required');
  t.ok(names(await c.post('ai.saveCustomProviders', { providers: [{ name: 'x', apiUrl: 'not a url' }] }), 'providers'), 'a URL');
  t.ok(names(await c.post('ai.saveCustomProviders', { providers: [{ name: 'x'.repeat(256), apiUrl }] }), 'providers'), 'a name of at most 255 characters');
  t.ok(names(await c.post('ai.saveCustomProviders', { providers: [{ name: 'x', apiUrl: `https://e.com/${'p'.repeat(2048)}` }] }), 'providers'), 'a URL of at most 2048 characters');
  t.ok(names(await c.post('ai.saveCustomProviders', { providers: 'all' }), 'providers'), 'a list');
  t.ok(names(await c.post('ai.saveCustomProviders', {}), 'providers'), 'required');
  t.ok(names(await c.trpc('mutation', 'ai.saveCustomProviders', { providers: [{ name: 3, apiUrl }] }), 'providers'), 'the tRPC form names it too');
  t.same((await c.get('ai.getCustomProviders')).body, [], 'nothing was stored');
});

t.test("another organization reaches none of the organization's AI", async t => {
  await c.post('ai.saveCustomProviders', { providers: [{ name: 'Internal LLM', apiUrl }] });
  const stranger = await otherOrganization(server, admin.userId);
  const s = stranger.client;
  const before = llm.requests.length;
  for (const r of await both(s, 'mutation', 'ai.analyzeLogs', { aiId, logs: FAILING_LOG, context: 'build' })) t.equal(r.status, 404, "another organization's configuration is not found");
  t.equal(llm.requests.length, before, 'and its model is not asked');
  for (const r of await both(s, 'query', 'ai.getEnabledProviders')) t.same(data(r), [], 'none of its configurations listed');
  for (const r of await both(s, 'query', 'ai.getCustomProviders')) t.same(data(r), [], 'nor its allowed services');
  t.equal((await s.post('ai.create', { name: 'own', apiUrl: 'https://api.openai.com/v1', apiKey: 'k', model: 'm', isEnabled: false })).status, 200, "the first organization's list binds only it");
  t.same((await s.post('ai.saveCustomProviders', { providers: [{ name: 'Theirs', apiUrl: 'https://api.openai.com/v1' }] })).body, [{ name: 'Theirs', apiUrl: 'https://api.openai.com/v1' }]);
  t.same((await c.get('ai.getCustomProviders')).body, [{ name: 'Internal LLM', apiUrl }], 'and its own list does not change the first one');
  await c.post('ai.saveCustomProviders', { providers: [] });
});
