// The published dokploy-sdk (a strict client: it validates every answer against its own
// response schemas) drives Berth through the same walk as the shape test, and accepts every
// answer — no "Response validation failed" — but where it rejects the peer's own answer at
// v0.30.2 too (SDK_REJECTS_PEER in peer-shapes/rules.ts). Then a new user's first session, run for
// real on an instance started as one coming from the peer (proxy traefik, platformNetwork
// dokploy-network): project, environment, application, docker provider, deploy, application.one
// polled until done (its deployments answered queued and running along the way), deployment.all,
// a postgres created, deployed, read and removed, and everything cleaned up.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startTestServer, signUpAdmin, freePort, waitFor, TEST_POSTGRES_IMAGE, TEST_STATIC_IMAGE, type TestServer } from '@berth/core/testing';
import Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
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

type Issue = { path: (string | number)[]; message: string; unionErrors?: { issues: Issue[] }[] };

/**
 * Calls operations through the SDK (or Berth's own client where the SDK predates one); records the
 * answers the SDK rejects, apart from those it rejects from the peer at v0.30.2 too. The SDK answers
 * what its schema keeps of a reply (zod drops the fields it does not list): callers go on with the
 * reply as Berth sent it.
 */
async function sdkCaller(server: TestServer, apiKey: string, client: { get(op: string, input?: unknown): Promise<any>; post(op: string, input?: unknown): Promise<any> }, doc: any) {
  const { DokployCore } = await import('dokploy-sdk/core');
  const { HTTPClient } = await import('dokploy-sdk');
  let lastReply: unknown;
  const httpClient = new HTTPClient({
    fetcher: async (request: Request | URL | string, init?: RequestInit) => {
      const res = await fetch(request, init);
      lastReply = await res
        .clone()
        .json()
        .catch(() => undefined);
      return res;
    },
  });
  const sdk = new DokployCore({ serverURL: `${server.url}/api`, apiKeyAuth: apiKey, httpClient });
  const functions = await sdkFunctions();
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
      const error = result.error as Error & { cause?: { issues?: Issue[] } };
      // A union's issues are those of its members: the answer's member is the one that got furthest.
      const isErrorMember = (issues: Issue[]) => issues.some(i => i.path[0] === 'code' || i.path[0] === 'message');
      const flat = (issues: Issue[]): Issue[] =>
        issues.flatMap(i =>
          i.unionErrors
            ? flat(
                i.unionErrors
                  .map(e => e.issues)
                  .filter(m => !isErrorMember(m))
                  .sort((a, b) => a.length - b.length)[0] ?? [],
              )
            : [i],
        );
      const issues = flat(error.cause?.issues ?? [])
        .slice(0, 6)
        .map(i => `${i.path.join('.')} ${i.message}`)
        .join('; ');
      if (SDK_REJECTS_PEER[op] && error.name === 'ResponseValidationError') rejectedAsThePeer.push(op);
      else rejected.push(`${op}: ${error.name}: ${error.message.split('\n')[0]}${issues ? ` (${issues})` : ''}`);
    }
    if (lastReply === undefined) throw new Error(`${op}: no reply (${result.ok ? 'ok' : (result.error as Error).message})`);
    return lastReply as any;
  };
  return { call, functions, viaSdk, rejected, rejectedAsThePeer };
}

t.test('dokploy-sdk accepts every answer of the walk', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const { client, apiKey, userId, organizationId } = await signUpAdmin(server);
  const doc = (await client.get('settings.getOpenApiDocument')).body;
  const { call, functions, viaSdk, rejected, rejectedAsThePeer } = await sdkCaller(server, apiKey, client, doc);
  t.ok(functions.size > 300, `${functions.size} SDK functions`);
  // Creations cannot be repeated: the walk's records are made once, by the SDK where it knows the operation.
  const meaning: string[] = [];
  let checks = 0;
  const check = (ok: boolean, what: string) => {
    checks++;
    if (!ok) meaning.push(what);
  };
  // The inputs the SDK's older schemas drop (domain.create's customEntrypoint, randomizeCompose's prefix) go as sent through Berth's own client.
  const raw = async (op: string, input: Record<string, unknown>) => {
    const reply = await client.post(op, input);
    if (reply.status !== 200) throw new Error(`${op}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };
  await walk(call, { databases: scenarioDatabases(doc, server.kernel.container.cradle.workloads.kinds()), port: await freePort(), suffix: uniqueSuffix(), userId, organizationId, check, raw });
  t.same(
    meaning,
    [],
    'what the answers mean: queued deployments answer the peer\'s running with state queued and startedAt null, cancelled ones error with state cancelled; "" is read back as sent; randomizeCompose\'s suffix',
  );
  t.ok(checks > 40, `${checks} checks of what the answers mean`);
  t.same(rejected, [], 'the SDK validated every answer (no "Response validation failed")');
  const disagreements = Object.keys(SDK_REJECTS_PEER)
    .filter(op => viaSdk.includes(op))
    .sort();
  t.same([...new Set(rejectedAsThePeer)].sort(), disagreements, 'and rejected exactly the answers it rejects from the peer at v0.30.2 too');
  t.ok(viaSdk.length > 70, `${viaSdk.length} calls made through the SDK`);
});

t.test("a new user's first session through the SDK, run for real on an instance coming from the peer", async t => {
  const proxy = `berth-test-sdk-proxy-${randomBytes(3).toString('hex')}`;
  const server = await startTestServer({
    proxy: 'traefik',
    proxyImage: TEST_STATIC_IMAGE, // no Traefik binary here: a stand-in holds the proxy service
    proxyHttpPort: await freePort(),
    proxyHttpsPort: await freePort(),
    platformNetwork: 'dokploy-network',
    providers: { proxy: { traefik: { options: { serviceName: proxy } } } },
    deploySettleSeconds: 0,
  });
  const docker = new Docker();
  t.teardown(async () => {
    await docker
      .getService(proxy)
      .remove()
      .catch(() => undefined);
    await server.destroy();
  });
  const { client, apiKey } = await signUpAdmin(server);
  const doc = (await client.get('settings.getOpenApiDocument')).body;
  const { call, viaSdk, rejected, rejectedAsThePeer } = await sdkCaller(server, apiKey, client, doc);
  const suffix = randomBytes(3).toString('hex');

  const { project } = await call('project.create', { name: `first ${suffix}` });
  const environment = await call('environment.create', { projectId: project.projectId, name: 'staging' });
  const app = await call('application.create', { name: 'web', environmentId: environment.environmentId, appName: `sdk-web-${suffix}` });
  await call('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_STATIC_IMAGE, username: null, password: null, registryUrl: null });
  await call('application.deploy', { applicationId: app.applicationId });
  // Polled as a client would: every answer on the way (queued, running) passes the SDK's schema.
  const seen = new Set<string>();
  const deployed = await waitFor(
    'the application deployed',
    async () => {
      const one = await call('application.one', { applicationId: app.applicationId });
      for (const d of one.deployments) seen.add(`${d.status}/${d.state}`);
      const [latest] = one.deployments;
      if (latest?.state === 'error') throw new Error(`the deployment failed: ${latest.errorMessage}`);
      return latest?.status === 'done' && one.applicationStatus === 'done' ? one : undefined;
    },
    { timeout: 180_000, interval: 100 },
  );
  t.equal(deployed.applicationStatus, 'done', 'application.one says done');
  t.ok(
    [...seen].every(s => /^(running|done|error)\//.test(s)),
    `every status answered is the peer's (${[...seen].join(', ')})`,
  );
  const network = await docker.getNetwork('dokploy-network').inspect();
  const spec = (await docker.getService(app.appName).inspect()).Spec;
  t.ok(
    spec.TaskTemplate.Networks.some((n: { Target: string }) => n.Target === network.Id || n.Target === 'dokploy-network'),
    'the application runs on dokploy-network',
  );
  const deployments = await call('deployment.all', { applicationId: app.applicationId });
  t.match(deployments, [{ status: 'done', state: 'done', applicationId: app.applicationId }], 'deployment.all');

  const pg = await call('postgres.create', {
    name: 'main',
    appName: `sdk-db-${suffix}`,
    environmentId: environment.environmentId,
    databaseName: 'app',
    databaseUser: 'app',
    databasePassword: 'Secret_pw-1',
    dockerImage: TEST_POSTGRES_IMAGE,
  });
  await call('postgres.deploy', { postgresId: pg.postgresId });
  const running = await waitFor(
    'the database deployed',
    async () => {
      const one = await call('postgres.one', { postgresId: pg.postgresId });
      if (one.applicationStatus === 'error') throw new Error('the database deploy failed');
      return one.applicationStatus === 'done' ? one : undefined;
    },
    { timeout: 180_000, interval: 200 },
  );
  t.equal(running.applicationStatus, 'done', 'postgres.one says done');
  await call('postgres.remove', { postgresId: pg.postgresId });
  await call('application.delete', { applicationId: app.applicationId });
  await call('environment.remove', { environmentId: environment.environmentId });
  await call('project.remove', { projectId: project.projectId });
  await t.rejects(docker.getService(app.appName).inspect(), { statusCode: 404, message: `service ${app.appName} not found` }, "cleaned up: the application's service is gone");

  t.same(rejected, [], 'the SDK validated every answer of the session');
  t.same([...new Set(rejectedAsThePeer)], ['postgres.create'], 'but postgres.create, where the SDK is stale against the peer itself (it expects a boolean; the peer answers the row)');
  t.ok(viaSdk.length >= 12, `${viaSdk.length} calls through the SDK`);
});
