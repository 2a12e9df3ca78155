// Issue 38: an AI provider written outside the repository, as a third party writes one — two files
// (package.json + index.js) in a temporary directory, importing @berth/core from the running
// Berth — enabled by one config line (`providers.ai.echo.resolve`). It claims the URLs whose path
// starts with /echo; ai.getModels and ai.testConnection of a configuration with such a URL go
// through it (and through the instance's guarded fetch), the others still to the built-in ones.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { signUpAdmin, startTestServer, TEST_BASE_IMAGE } from '@berth/core/testing';
import { startLlmStandIn } from '../plugins/ai/test/llm-stand-in.ts';

const outside = mkdtempSync(path.join(os.tmpdir(), 'berth-third-party-ai-'));
t.teardown(() => rmSync(outside, { recursive: true, force: true }));
const dir = path.join(outside, 'berth-provider-ai-echo');
mkdirSync(dir);
writeFileSync(
  path.join(dir, 'package.json'),
  JSON.stringify({ name: 'berth-provider-ai-echo', version: '1.0.0', type: 'module', main: 'index.js', peerDependencies: { '@berth/core': '*' } }, null, 2),
);
writeFileSync(
  path.join(dir, 'index.js'),
  `
import { aiCall, defineProvider, Type } from '@berth/core';

class EchoProvider {
  id = 'echo';
  label = 'Echo';
  matches(url) { return url.pathname.startsWith('/echo'); }
  async listModels(c) {
    const { names } = await (await aiCall(c, c.apiUrl + '/names', {})).json();
    return names.map(id => ({ id, object: 'model', created: 0, owned_by: 'echo' }));
  }
  async generate(c, r) { return r.schema ? JSON.stringify({ suggestions: [] }) : 'echo: ' + r.prompt; }
}

export default defineProvider({ contract: 'ai', id: 'echo', options: Type.Object({}), create: () => new EchoProvider() });
`,
);

const llm = await startLlmStandIn(TEST_BASE_IMAGE);
t.teardown(() => llm.close());

t.test('two files and one config line: an AI provider found by its URL', async t => {
  const server = await startTestServer({ providers: { ai: { echo: { resolve: dir } } }, outboundAllow: [`127.0.0.1:${llm.port}`] });
  t.teardown(() => server.destroy());
  const { providers, aiService } = server.kernel.container.cradle as any;
  t.same(providers.ids('ai'), ['anthropic', 'ollama', 'openai', 'echo']);
  t.equal(aiService.providerFor(`${llm.url}/echo`).id, 'echo');
  t.equal(aiService.providerFor(`${llm.url}/v1`).id, 'openai', 'other URLs keep their provider');
  const { client } = await signUpAdmin(server);
  const made = await client.post('ai.create', { name: 'Echo', apiUrl: `${llm.url}/echo`, apiKey: 'none', model: 'echo-1', isEnabled: true });
  t.equal(made.status, 200);
  const models = await client.get('ai.getModels', { apiUrl: `${llm.url}/echo`, apiKey: '' });
  t.same(models.body, [
    { id: 'echo-1', object: 'model', created: 0, owned_by: 'echo' },
    { id: 'echo-2', object: 'model', created: 0, owned_by: 'echo' },
  ]);
  t.match((await client.post('ai.testConnection', { apiUrl: `${llm.url}/echo`, apiKey: '', model: 'echo-1' })).body, { success: true });
  t.equal((await client.post('ai.suggest', { aiId: made.body.aiId, input: 'anything' })).status, 404, 'no suggestions: 404');
});
