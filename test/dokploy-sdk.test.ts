// The published dokploy-sdk (a strict client: it validates every answer against its own
// response schemas) drives Berth through the same walk as the shape test, and accepts every
// answer — no "Response validation failed" — but where it rejects the peer's own answer at
// v0.30.2 too (SDK_REJECTS_PEER in peer-shapes/rules.ts).
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startTestServer, signUpAdmin, freePort } from '@berth/core/testing';
import { scenarioDatabases, uniqueSuffix, walk } from './peer-shapes/scenario.ts';
import { SDK_REJECTS_PEER } from './peer-shapes/rules.ts';

/** Every SDK function by the operation it calls (`router.procedure`), read from the package's own files. */
async function sdkFunctions(): Promise<Map<string, (client: unknown, request: unknown) => Promise<any>>> {
  const require = createRequire(import.meta.url);
  const funcs = path.join(path.dirname(require.resolve('dokploy-sdk/package.json')), 'dist', 'esm', 'funcs');
  const out = new Map<string, (client: unknown, request: unknown) => Promise<any>>();
  for (const file of readdirSync(funcs).filter(f => f.endsWith('.js'))) {
    const op = /pathToFunc\("\/([\w.]+)"\)/.exec(readFileSync(path.join(funcs, file), 'utf8'))?.[1];
    if (!op) continue;
    const mod = await import(pathToFileURL(path.join(funcs, file)).href);
    out.set(op, mod[file.replace(/\.js$/, '')]);
  }
  return out;
}

t.test('dokploy-sdk accepts every answer of the walk', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const { client, apiKey, userId, organizationId } = await signUpAdmin(server);
  const doc = (await client.get('settings.getOpenApiDocument')).body;
  const { DokployCore } = await import('dokploy-sdk/core');
  const { HTTPClient } = await import('dokploy-sdk');
  // The SDK answers what its schema keeps of a reply (zod drops the fields it does not list):
  // the walk goes on with the reply as Berth sent it.
  let lastReply: unknown;
  const httpClient = new HTTPClient({
    fetcher: async (request: Request | URL | string, init?: RequestInit) => {
      const res = await fetch(request, init);
      lastReply = await res.clone().json().catch(() => undefined);
      return res;
    },
  });
  const sdk = new DokployCore({ serverURL: `${server.url}/api`, apiKeyAuth: apiKey, httpClient });
  const functions = await sdkFunctions();
  t.ok(functions.size > 300, `${functions.size} SDK functions`);

  const viaSdk: string[] = [];
  const rejected: string[] = [];
  const rejectedAsThePeer: string[] = [];
  const call = async (op: string, input: Record<string, unknown>) => {
    const fn = functions.get(op);
    if (!fn) {
      // The SDK predates this operation: Berth's own client makes the call.
      const method = doc.paths[`/${op}`]?.get ? 'get' : 'post';
      const reply = await client[method](op, input);
      if (reply.status !== 200) throw new Error(`${op}: ${reply.status} ${JSON.stringify(reply.body)}`);
      return reply.body;
    }
    lastReply = undefined;
    const result = await fn(sdk, input);
    viaSdk.push(op);
    if (!result.ok) {
      type Issue = { path: (string | number)[]; message: string; unionErrors?: { issues: Issue[] }[] };
      const error = result.error as Error & { cause?: { issues?: Issue[] } };
      // A union's issues are those of its members: the answer's member is the one that got furthest.
      const isErrorMember = (issues: Issue[]) => issues.some(i => i.path[0] === 'code' || i.path[0] === 'message');
      const flat = (issues: Issue[]): Issue[] => issues.flatMap(i => (i.unionErrors ? flat(i.unionErrors.map(e => e.issues).filter(m => !isErrorMember(m)).sort((a, b) => a.length - b.length)[0] ?? []) : [i]));
      const issues = flat(error.cause?.issues ?? []).slice(0, 6).map(i => `${i.path.join('.')} ${i.message}`).join('; ');
      if (SDK_REJECTS_PEER[op] && error.name === 'ResponseValidationError') rejectedAsThePeer.push(op);
      else rejected.push(`${op}: ${error.name}: ${error.message.split('\n')[0]}${issues ? ` (${issues})` : ''}`);
    }
    if (lastReply === undefined) throw new Error(`${op}: no reply (${result.ok ? 'ok' : (result.error as Error).message})`);
    return lastReply;
  };
  // Creations cannot be repeated: the walk's records are made once, by the SDK where it knows the operation.
  const meaning: string[] = [];
  let checks = 0;
  const check = (ok: boolean, what: string) => { checks++; if (!ok) meaning.push(what); };
  await walk(call, { databases: scenarioDatabases(doc, server.kernel.container.cradle.workloads.kinds()), port: await freePort(), suffix: uniqueSuffix(), userId, organizationId, check });
  t.same(meaning, [], 'queued deployments answer the peer\'s running with state queued and startedAt null; cancelled ones error with state cancelled');
  t.ok(checks > 40, `${checks} checks of the deployments' status and state`);
  t.same(rejected, [], 'the SDK validated every answer (no "Response validation failed")');
  const disagreements = Object.keys(SDK_REJECTS_PEER).filter(op => viaSdk.includes(op)).sort();
  t.same([...new Set(rejectedAsThePeer)].sort(), disagreements, 'and rejected exactly the answers it rejects from the peer at v0.30.2 too');
  t.ok(viaSdk.length > 70, `${viaSdk.length} calls made through the SDK`);
});
