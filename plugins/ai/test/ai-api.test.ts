// ai.* end to end on a real kernel against a loopback language-model service (llm-stand-in.ts):
// configurations with their key sealed and never answered; getModels and testConnection reaching
// only owned or listed URLs (outboundAllow), refusing special addresses unless listed, on the address actually
// connected to; suggestions checked before they are answered (a good one, a host bind of /, invalid
// YAML then fixed, one failing twice), retried once with their problems; provider errors quoted
// with the key redacted, never Berth's 401; Ollama's and Anthropic's wire formats; another
// organization's configurations are 404; ai.deploy refuses a failing file naming its problems and
// brings a good one up as a running stack on the Docker engine.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import Docker from 'dockerode';
import pg from 'pg';
import { otherOrganization, signUpAdmin, startTestServer, waitFor, TEST_BASE_IMAGE, type TestServer } from '@berth/core/testing';
import { AiProviderError } from '@berth/core';
import { GOOD_KEY, startLlmStandIn } from './llm-stand-in.ts';

t.setTimeout(600_000);
const docker = new Docker();

const llm = await startLlmStandIn(TEST_BASE_IMAGE);
t.teardown(() => llm.close());
// Another loopback server, reached by a name (localhost) the instance lists but on an address it does not.
const other = http.createServer((_req, res) => res.end('{"data":[]}'));
await new Promise<void>(resolve => other.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise(resolve => other.close(resolve)));
const otherPort = (other.address() as AddressInfo).port;

const server: TestServer = await startTestServer({ proxy: 'none', deploySettleSeconds: 1, aiTimeoutSeconds: 20, outboundAllow: [`127.0.0.1:${llm.port}`, 'localhost'] } as never);
t.teardown(() => server.destroy());
const admin = await signUpAdmin(server);
const c = admin.client;
const cradle = server.kernel.container.cradle as any;
const apiUrl = `${llm.url}/v1`;

const made = await c.post('ai.create', { name: 'Stand-in', apiUrl: `${apiUrl}/`, apiKey: GOOD_KEY, model: 'gpt-test', isEnabled: true });
const aiId: string = made.body.aiId;
let envId: string | undefined;
/** The environment the deploys go to, made on first use. */
async function environmentId(): Promise<string> {
  envId ??= (await c.post('project.create', { name: 'AI stacks' })).body.environment.environmentId as string;
  return envId;
}

t.test('a configuration: the key sealed at rest and never answered', async t => {
  t.equal(made.status, 200, JSON.stringify(made.body));
  t.match(made.body, { name: 'Stand-in', apiUrl, model: 'gpt-test', isEnabled: true, organizationId: admin.organizationId });
  t.notOk('apiKey' in made.body, 'create does not answer the key');
  for (const op of ['ai.one', 'ai.get']) {
    const r = await c.get(op, { aiId });
    t.equal(r.status, 200);
    t.notOk(JSON.stringify(r.body).includes(GOOD_KEY), `${op} does not answer the key`);
  }
  const all = await c.get('ai.getAll');
  t.same(
    all.body.map((a: any) => a.aiId),
    [aiId],
  );
  const db = new pg.Client(server.database);
  await db.connect();
  const { rows } = await db.query('select api_key from ai where ai_id = $1', [aiId]);
  await db.end();
  t.match(rows[0].api_key, /^v1:/, 'sealed by the SecretBox');
  t.notOk(rows[0].api_key.includes(GOOD_KEY));
  const bad = await c.post('ai.create', { name: 'x', apiUrl, apiKey: '', model: 'm', isEnabled: true });
  t.equal(bad.status, 400, 'apiKey min length 1 (the spec)');
  t.match(JSON.stringify(bad.body), /apiKey/);
  const renamed = await c.post('ai.update', { aiId, name: 'Renamed' });
  t.match(renamed.body, { aiId, name: 'Renamed', apiUrl });
});

t.test('getModels and testConnection: owned or allowed URLs; errors quoted with the key redacted', async t => {
  const models = await c.get('ai.getModels', { apiUrl, apiKey: '' });
  t.equal(models.status, 200, JSON.stringify(models.body));
  t.match(models.body, [{ id: 'gpt-test', object: 'model', created: 1700000000, owned_by: 'stand-in' }], 'the owned URL, with its stored key');
  t.match((await c.post('ai.testConnection', { apiUrl, apiKey: '', model: 'gpt-test' })).body, { success: true, message: 'Connection successful' });

  const wrongKey = 'sk-wrong-9876543210abcdef';
  const refused = await c.post('ai.testConnection', { apiUrl, apiKey: wrongKey, model: 'gpt-test' });
  t.equal(refused.status, 400, "a provider 401 is a 400, never Berth's 401");
  t.match(refused.body.message, /answered 401: Incorrect API key provided: \[redacted\]/);
  t.notOk(JSON.stringify(refused.body).includes(wrongKey), 'the key is redacted');
  const models401 = await c.get('ai.getModels', { apiUrl, apiKey: wrongKey });
  t.equal(models401.status, 400);
  t.notOk(JSON.stringify(models401.body).includes(wrongKey));

  const unlisted = await c.get('ai.getModels', { apiUrl: 'http://10.20.30.40:8080/v1', apiKey: 'k' });
  t.equal(unlisted.status, 400, 'a private URL no configuration holds and no entry lists');
  t.match(JSON.stringify(unlisted.body), /apiUrl.*outboundAllow/);
  const elsewhere = await c.get('ai.getModels', { apiUrl: 'https://models.example.net/v1', apiKey: 'k' });
  t.equal(elsewhere.status, 400, 'any URL no configuration holds and no entry lists: no open fetcher');

  // Link-local (cloud metadata) is refused to every organization, the instance operators' too, when it is saved.
  const metadata = await c.post('ai.create', { name: 'metadata', apiUrl: 'http://169.254.169.254/v1', apiKey: 'k-private', model: 'm', isEnabled: true });
  t.equal(metadata.status, 400, 'a configuration on a link-local address');
  t.match(JSON.stringify(metadata.body.issues), /apiUrl.*169\.254\.169\.254.*link-local.*outboundAllow/);

  const before = llm.requests.length;
  const rebound = await c.get('ai.getModels', { apiUrl: `http://localhost:${otherPort}/v1`, apiKey: 'k' });
  t.equal(rebound.status, 400, 'a listed name resolving to an unlisted loopback address');
  t.match(JSON.stringify(rebound.body.issues), /apiUrl: points at (127\.0\.0\.1|::1) \(the address of localhost\), a loopback address/);
  t.equal(llm.requests.length, before, 'nothing was sent');
});

t.test('suggest: every suggestion checked, retried once, problems answered', async t => {
  const suggest = (word: string, id = aiId) => c.post('ai.suggest', { aiId: id, input: `run a small web page scenario:${word}` });

  const good = await suggest('good');
  t.equal(good.status, 200, JSON.stringify(good.body));
  t.equal(good.body.length, 1);
  t.match(good.body[0], { id: 'good-app', envVariables: [{ name: 'GREETING' }], domains: [{ serviceName: 'web', port: 8080 }], configFiles: [{ filePath: 'greeting.txt' }], problems: [] });
  const asked = llm.requests.filter(r => r.path === '/v1/chat/completions').at(-1)!;
  t.equal(asked.body.response_format.type, 'json_schema', 'structured output');
  t.equal(asked.body.model, 'gpt-test');

  const root = await suggest('rootbind');
  t.equal(root.status, 200);
  t.match(root.body[0].problems.join('\n'), /host access policy.*bind mounts are off/, 'a bind of / fails the host access policy, after its retry');
  const retry = llm.requests.filter(r => r.path === '/v1/chat/completions').at(-1)!;
  t.match(retry.body.messages.at(-1).content, /failed these checks:\n- Refused by this instance's host access policy/, 'the retry quotes the problems');
  const refused = await c.post('ai.deploy', { environmentId: await environmentId(), id: 'root', name: 'root', description: '', dockerCompose: root.body[0].dockerCompose, envVariables: 'A=b' });
  t.equal(refused.status, 400, 'deploy refuses it');
  t.match(refused.body.message, /cannot be deployed: .*host access policy/);

  const yaml = await suggest('badyaml');
  t.same(yaml.body[0].problems, [], 'invalid YAML, fixed on the retry');
  const yamlRetry = llm.requests.filter(r => r.path === '/v1/chat/completions').at(-1)!;
  t.match(yamlRetry.body.messages.at(-1).content, /not valid YAML/);

  const twice = await suggest('twice');
  t.match(twice.body[0].problems.join('\n'), /build: a suggestion cannot build/);
  t.match(twice.body[0].problems.join('\n'), /image: missing/);

  const wrong = await c.post('ai.create', { name: 'wrong key', apiUrl, apiKey: 'sk-revoked-abcdef0123456789', model: 'gpt-test', isEnabled: true });
  const failed = await suggest('good', wrong.body.aiId);
  t.equal(failed.status, 400);
  t.match(failed.body.message, /The AI provider \(OpenAI-compatible\) answered 401: Incorrect API key provided: \[redacted\]/);
  t.notOk(JSON.stringify(failed.body).includes('sk-revoked'));
  await c.post('ai.update', { aiId: wrong.body.aiId, isEnabled: false });
  t.equal((await suggest('good', wrong.body.aiId)).status, 404, 'a disabled configuration suggests nothing');
});

t.test('the provider is chosen from the URL; Ollama and Anthropic speak their own formats', async t => {
  t.equal(cradle.aiService.providerFor('http://ollama.internal:11434').id, 'ollama');
  t.equal(cradle.aiService.providerFor('https://api.anthropic.com/v1').id, 'anthropic');
  t.equal(cradle.aiService.providerFor('https://api.openai.com/v1').id, 'openai');
  const connection = (path: string, apiKey: string) => ({ apiUrl: `${llm.url}${path}`, apiKey, fetch, signal: AbortSignal.timeout(10_000) });
  const schema = { type: 'object' };

  const ollama = cradle.providers.get('ai', 'ollama');
  t.match(await ollama.listModels(connection('', '')), [{ id: 'llama-test:8b', object: 'model', owned_by: 'ollama' }]);
  const fromOllama = JSON.parse(await ollama.generate(connection('', ''), { model: 'llama-test:8b', system: 's', prompt: 'scenario:good', schema }));
  t.equal(fromOllama.suggestions[0].id, 'good-app');
  t.same(llm.requests.at(-1)!.body.format, schema, 'the schema goes as format');
  t.equal(llm.requests.at(-1)!.body.stream, false);
  const missing = await ollama.generate(connection('', ''), { model: 'nope', system: 's', prompt: 'p' }).catch((e: unknown) => e);
  t.ok(missing instanceof AiProviderError);
  t.match(missing, { status: 404, message: /model "nope" not found/ });

  const anthropic = cradle.providers.get('ai', 'anthropic');
  t.match(await anthropic.listModels(connection('/v1', GOOD_KEY)), [{ id: 'claude-test', object: 'model', owned_by: 'anthropic' }]);
  const fromClaude = JSON.parse(await anthropic.generate(connection('/v1', GOOD_KEY), { model: 'claude-test', system: 's', prompt: 'scenario:twice', schema, schemaName: 'suggestions' }));
  t.match(fromClaude.suggestions[0].dockerCompose, /build: \./);
  const sent = llm.requests.at(-1)!;
  t.match(sent, { path: '/v1/messages', headers: { 'anthropic-version': '2023-06-01', 'x-api-key': GOOD_KEY }, body: { tool_choice: { type: 'tool', name: 'suggestions' }, system: 's' } });
  const denied = await anthropic.listModels(connection('/v1', 'sk-ant-wrong-123456')).catch((e: unknown) => e);
  t.match(denied, { status: 401, message: /invalid x-api-key/ });
});

t.test("another organization's configurations are 404", async t => {
  const stranger = await otherOrganization(server, admin.userId);
  const s = stranger.client;
  t.equal((await s.get('ai.one', { aiId })).status, 404);
  t.equal((await s.get('ai.get', { aiId })).status, 404);
  t.equal((await s.post('ai.update', { aiId, name: 'taken' })).status, 404);
  t.equal((await s.post('ai.suggest', { aiId, input: 'scenario:good' })).status, 404);
  t.equal((await s.post('ai.delete', { aiId })).status, 404);
  t.same((await s.get('ai.getAll')).body, []);
  const unknownUrl = await s.get('ai.getModels', { apiUrl: 'https://models.example.net/v1', apiKey: '' });
  t.equal(unknownUrl.status, 400, "the other organization's URLs are not its own");
  t.equal((await c.get('ai.one', { aiId })).body.name, 'Renamed', 'untouched');
});

t.test('deploy: a good suggestion becomes a running stack with its config file', async t => {
  const [s] = (await c.post('ai.suggest', { aiId, input: 'scenario:good' })).body;
  const environmentId_ = await environmentId();
  const deployed = await c.post('ai.deploy', {
    environmentId: environmentId_,
    id: s.id,
    name: s.name,
    description: s.description,
    dockerCompose: s.dockerCompose,
    envVariables: s.envVariables.map((v: any) => `${v.name}=${v.value}`).join('\n'),
    domains: s.domains,
    configFiles: s.configFiles,
  });
  t.equal(deployed.status, 200, JSON.stringify(deployed.body));
  t.equal(deployed.body, null);
  const stack = (await c.get('environment.one', { environmentId: environmentId_ })).body.compose[0];
  t.match(stack, { name: s.name });
  t.teardown(() => c.post('compose.delete', { composeId: stack.composeId, deleteVolumes: true }));
  const one = (await c.get('compose.one', { composeId: stack.composeId })).body;
  t.match(one, { env: /GREETING=hello-from-ai/, mounts: [{ type: 'file', filePath: 'greeting.txt' }], domains: [{ host: 'web-abc.sslip.io', port: 8080, serviceName: 'web' }] });
  const project = stack.appName.toLowerCase().replace(/[^-_a-z0-9]/g, '');
  const container = await waitFor(
    "the stack's container running",
    async () => {
      const list = await docker.listContainers({ filters: { label: [`com.docker.compose.project=${project}`] } });
      return list.find(x => x.State === 'running');
    },
    { timeout: 180_000, interval: 500 },
  );
  const logs = await waitFor(
    'the config file read by the container',
    async () => {
      const text = (await docker.getContainer(container.Id).logs({ stdout: true, stderr: true })).toString('utf8');
      if (!text.includes('greeting-from-config-file')) throw new Error(`container log: ${text}`);
      return text;
    },
    { timeout: 30_000 },
  );
  t.match(logs, /greeting-from-config-file/, 'the config file is mounted from ../files/');
  const status = await waitFor(
    'the deploy finished',
    async () => {
      const now = (await c.get('compose.one', { composeId: stack.composeId })).body.composeStatus;
      return now === 'running' ? undefined : now;
    },
    { timeout: 120_000, interval: 500 },
  );
  t.equal(status, 'done', 'the queued deploy succeeded');
});
