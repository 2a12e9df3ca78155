// A loopback language-model service for the ai tests, speaking the three wire formats Berth's AI
// providers use: OpenAI's (GET /v1/models, POST /v1/chat/completions), Ollama's (GET /api/tags,
// POST /api/chat) and Anthropic's (GET /v1/models with x-api-key, POST /v1/messages). What it
// answers is scripted by a word in the user's request (see SCRIPTS, and textFor for answers
// without a schema: a log analysis); a wrong key is a 401 whose message quotes the key, as
// OpenAI's does. Every request is recorded. Test-only.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const GOOD_KEY = 'sk-test-good-0123456789';

/** A compose file that runs on the test engine: one service, its config file mounted from ../files/. */
export const goodCompose = (image: string) => `services:
  web:
    image: ${image}
    command: ["sh", "-c", "cat /etc/berth-ai/greeting.txt; echo; sleep 3600"]
    volumes:
      - ../files/greeting.txt:/etc/berth-ai/greeting.txt:ro
    environment:
      GREETING: \${GREETING}
`;

const suggestion = (id: string, dockerCompose: string) => ({
  id,
  name: `Suggestion ${id}`,
  shortDescription: 'one line',
  description: 'plain text',
  dockerCompose,
  envVariables: [{ name: 'GREETING', value: 'hello-from-ai' }],
  domains: [{ host: 'web-abc.sslip.io', port: 8080, serviceName: 'web' }],
  configFiles: [{ filePath: 'greeting.txt', content: 'greeting-from-config-file' }],
});

/**
 * What each scripted word answers, first and on a retry (a prompt that quotes failed checks):
 * good: a deployable suggestion; rootbind: binds the host's / both times; badyaml: invalid YAML,
 * then a good one; twice: a `build:` without an image both times.
 */
export const SCRIPTS = (image: string): Record<string, { first: string; retry: string }> => ({
  good: { first: goodCompose(image), retry: goodCompose(image) },
  rootbind: { first: `services:\n  web:\n    image: ${image}\n    volumes:\n      - /:/host\n`, retry: `services:\n  web:\n    image: ${image}\n    volumes:\n      - /:/host:ro\n` },
  badyaml: { first: 'services:\n  web:\n    image: [unclosed\n', retry: goodCompose(image) },
  twice: { first: 'services:\n  web:\n    build: .\n', retry: 'services:\n  web:\n    build: ./app\n' },
});

/**
 * The answer to a prompt without a schema: for `scenario:silent`, no text; for a prompt with a
 * line that reports a failure (error, fatal, panic), an analysis quoting the first such line;
 * else "ok" (what testConnection asks for).
 */
export function textFor(prompt: string): string {
  if (prompt.includes('scenario:silent')) return '';
  const failing = prompt.split('\n').find(line => /\b(error|fatal|panic)\b/i.test(line));
  if (!failing) return 'ok';
  return [
    '## Summary',
    'The service stopped on an error.',
    '## Problems',
    `- \`${failing.trim()}\``,
    '## Likely cause',
    'What the quoted line reports.',
    '## What to do',
    'Fix what the quoted line reports, then deploy again.',
  ].join('\n');
}

export interface Recorded {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export async function startLlmStandIn(image: string, port = 0) {
  const requests: Recorded[] = [];
  const scripts = SCRIPTS(image);
  const answerFor = (prompt: string) => {
    const word = Object.keys(scripts).find(w => prompt.includes(`scenario:${w}`));
    if (!word) return { suggestions: [] };
    const retry = prompt.includes('failed these checks');
    return { suggestions: [suggestion(`${word}-app`, retry ? scripts[word]!.retry : scripts[word]!.first)] };
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', c => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text ? JSON.parse(text) : null;
      const url = new URL(req.url!, 'http://stand-in');
      requests.push({ method: req.method!, path: url.pathname, headers: req.headers, body });
      const send = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      const anthropic = typeof req.headers['x-api-key'] === 'string';
      const key = anthropic ? String(req.headers['x-api-key']) : String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      // Ollama and the out-of-tree test's /echo API take no key.
      const keyless = url.pathname.startsWith('/api/') || url.pathname.startsWith('/echo/');
      if (!keyless && key !== GOOD_KEY) {
        return anthropic
          ? send(401, { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${key}` } })
          : send(401, {
              error: { message: `Incorrect API key provided: ${key}. You can find your API key at https://platform.example/keys.`, type: 'invalid_request_error', code: 'invalid_api_key' },
            });
      }
      if (req.method === 'GET' && url.pathname === '/v1/models') {
        return anthropic
          ? send(200, { data: [{ type: 'model', id: 'claude-test', display_name: 'Claude Test', created_at: '2025-01-01T00:00:00Z' }], has_more: false })
          : send(200, { object: 'list', data: [{ id: 'gpt-test', object: 'model', created: 1700000000, owned_by: 'stand-in' }] });
      }
      if (req.method === 'GET' && url.pathname === '/api/tags') return send(200, { models: [{ name: 'llama-test:8b', model: 'llama-test:8b', modified_at: '2025-01-01T00:00:00Z' }] });
      if (req.method === 'POST' && url.pathname === '/v1/chat/completions') {
        const prompt = String(body.messages.at(-1).content);
        const content = body.response_format ? JSON.stringify(answerFor(prompt)) : textFor(prompt);
        return send(200, { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop' }] });
      }
      if (req.method === 'POST' && url.pathname === '/api/chat') {
        if (body.model !== 'llama-test:8b') return send(404, { error: `model "${body.model}" not found, try pulling it first` });
        const prompt = String(body.messages.at(-1).content);
        return send(200, { model: body.model, message: { role: 'assistant', content: body.format ? JSON.stringify(answerFor(prompt)) : textFor(prompt) }, done: true });
      }
      if (req.method === 'POST' && url.pathname === '/v1/messages') {
        const prompt = String(body.messages.at(-1).content);
        const content = body.tools ? [{ type: 'tool_use', id: 't1', name: body.tool_choice.name, input: answerFor(prompt) }] : [{ type: 'text', text: textFor(prompt) }];
        return send(200, { id: 'm1', type: 'message', role: 'assistant', content, stop_reason: body.tools ? 'tool_use' : 'end_turn' });
      }
      // The out-of-tree provider's own little API.
      if (req.method === 'GET' && url.pathname === '/echo/names') return send(200, { names: ['echo-1', 'echo-2'] });
      send(404, { error: { message: `no route ${req.method} ${url.pathname}` } });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${bound}`, port: bound, requests, close: () => new Promise<void>(resolve => server.close(() => resolve())) };
}
