// Tenancy: two organizations on one Berth, the second made by a stranger the way a second tenant
// makes one (invited into the instance's organization, then organization.create, then removed). This
// machine, its engine, swarm and proxy are the instance operators' (docs/security.md): every
// operation whose declared scope is `instance`, and every `{ host: field }` operation with the field
// left out, is refused to the tenant (403, before the input is read) — and the same call by an
// instance operator gets past the scope (its positive control: a 2xx, or a refusal for a reason
// other than who calls, named below), so each refusal is proven to come from the scope, not from
// validation. Operations added later join on their own: the walk is driven by the document's
// `x-berth-scope`, not a list. The other paths of the tenancy issue have suites of their own
// (test/tenancy-*.test.ts).
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { Client, addMember, signUpAdmin, startTestServer, type Reply } from '@berth/core/testing';
import { AT_ONCE, documentOperations, goodValue, inPool, type Operation } from './openapi-operations.ts';
import { dockerProcedures } from '../plugins/docker/src/procedures.ts';

type Scope = 'organization' | 'instance' | 'public' | { host: string };

/**
 * Operations that take an optional serverId yet act on no host of the instance's when it is left
 * out (`operation` → why), so their scope is the organization's. The test fails when one of them
 * takes no optional serverId any more (remove it) and on any other optional serverId whose scope is
 * not instance for the no-serverId case.
 */
const ORGANIZATION_WITHOUT_SERVER: Record<string, string> = {
  'domain.generateDomain': "accepted and ignored (the peer's input): the host is made from this instance's public address, the same for every organization",
  'domain.canGenerateTraefikMeDomains': "accepted and ignored (the peer's input): answers this instance's public address, the same for every organization",
  'server.publicIp': "this instance's public address, which every organization's generated domains point at (settings.getIp answers it too)",
  'swarm.getNodeApps': "lists the caller's own services and the nodes they run on, never another organization's",
  'ai.suggest': 'the server the suggestion is for, read to describe it; none: a suggestion for no server in particular (nothing runs)',
  'ai.deploy': "the organization's server the suggested stack is deployed to; none: this machine's swarm, where every organization deploys (placed by ownership labels)",
  'backup.listBackupFiles': "the server a local destination's files are read on; none: the destination's own storage (the organization's)",
  'destination.create': "the server a local destination lives on; none: an S3 destination's endpoint or this machine's backup directory kept per organization",
  'destination.update': 'as destination.create',
  'destination.testConnection': 'as destination.create',
  'registry.create': "the server whose engine checks the registry (a login, a push and a pull); none: this machine's engine, where the organization's builds run",
  'registry.update': 'as registry.create',
  'registry.testRegistry': 'as registry.create',
  'volumeBackups.restore': "the workload's own server, read from the workload; the field is the peer's and only checked",
  'application.create': "the organization's server it runs on; none: this machine's swarm, where every organization deploys (each service placed by ownership labels: docs/security.md)",
  'application.update': 'as application.create',
  'compose.create': 'as application.create',
  'compose.update': 'as application.create',
  'compose.deployTemplate': 'as application.create',
  'compose.previewTemplate': 'as application.create (a preview deploys nothing)',
  'postgres.create': 'as application.create',
  'mysql.create': 'as application.create',
  'mariadb.create': 'as application.create',
  'mongo.create': 'as application.create',
  'redis.create': 'as application.create',
  'libsql.create': 'as application.create',
  'certificates.create': "the server whose proxy serves it; none: this machine's proxy, which serves every organization's own domains (the certificate is the organization's record)",
  'registry.testRegistryById': 'as registry.create',
  'network.create':
    "the organization's server the network is made on; none: this machine's engine, where every organization's workloads run (the network labelled with its organization, never another's to inspect, join or remove)",
  'network.all': "the organization's networks on that server; none: its networks on this machine (records of its own)",
  'network.networksToSync': "as network.all: only networks Berth made for the organization are listed, never the rest of this machine's",
  'network.import': 'as network.networksToSync: only networks Berth made for the organization are taken',
  // Every procedure the docker plugin declares (docker.*, swarm.getContainerStats), from its router: one that
  // takes no optional serverId, or is not organization-scoped, fails the stale check below.
  ...Object.fromEntries(
    dockerProcedures.map(p => [
      p.path,
      "the organization's server's engine; none: this machine's, where the caller reaches only the containers and services Berth labelled as its organization's (an instance operator: all of them)",
    ]),
  ),
  ...Object.fromEntries(
    ['create', 'update'].map(op => [
      `schedule.${op}`,
      "serverId names the server a server schedule runs on (one of the organization's); left out, the schedule is a workload's, run in its container, or a dokploy-server one, which only an instance operator may make (403 naming hostAccess.hostSchedules otherwise)",
    ]),
  ),
  'patch.cleanPatchRepos': "removes the checkouts Berth keeps on this machine for patching, of the caller's organization's workloads only (serverId: of that server's); patches stay",
};

/**
 * What an instance operator's call answers when it is not a 2xx: refused for another reason than
 * who calls (`operation` → [status, why]). The test fails when the answer differs.
 */
/** Run without a proxy (nothing here may start one on the engine other files share): the proxy's operations answer so, past the scope. */
const NO_PROXY = "400: the test server runs no proxy, so the handler refuses past the scope (test/peer-traefik.test.ts and plugins/domain's suites run them with one)";
const OPERATOR_ANSWERS: Record<string, [number, string]> = {
  ...Object.fromEntries(
    [
      'readTraefikConfig',
      'updateTraefikConfig',
      'readWebServerTraefikConfig',
      'updateWebServerTraefikConfig',
      'readMiddlewareTraefikConfig',
      'updateMiddlewareTraefikConfig',
      'readTraefikFile',
      'updateTraefikFile',
      'readDirectories',
      'readTraefikEnv',
      'writeTraefikEnv',
      'reloadTraefik',
      'toggleDashboard',
      'haveTraefikDashboardPortEnabled',
      'getTraefikPorts',
      'updateTraefikPorts',
      'assignDomainServer',
    ].map(name => [`settings.${name}`, [400, NO_PROXY] as [number, string]]),
  ),
  'registry.enableSelfHostedRegistry': [400, NO_PROXY + ' (the registry is reached through the proxy; plugins/registry/test/self-hosted*.test.ts runs it)'],
  'settings.reloadServer': [409, 'the test server was not started by `berth start`, which alone restarts it (test/reload-server.test.ts runs it)'],
  'settings.setupGPU': [409, 'this machine has no GPU: the NVIDIA driver is not installed (plugins/cleanup/test/host-status.test.ts)'],
  'settings.cleanRedis': [404, 'Berth runs no Redis: the answer of a self-hosted peer without one (plugins/platform/test/self-hosted.test.ts)'],
  'settings.reloadRedis': [404, 'as settings.cleanRedis'],
  'cluster.joinServer': [404, 'the server to join is a made-up id (joining a real one: plugins/cluster/test/cluster.test.ts)'],
  'cluster.removeWorker': [404, 'the node is a made-up id (removing a real one: plugins/cluster/test/cluster.test.ts)'],
  'swarm.getNodeInfo': [404, 'the node is a made-up id (a real one: plugins/cluster/test/cluster.test.ts)'],
  'forwardAuth.deployOnServer': [400, "the input's providerId is no provider: Berth's own is berth (deployed on this machine's proxy: plugins/forward-auth/test/forward-auth.test.ts)"],
};

/** Plain values the calls need to get past validation, by field name. */
const GOOD: Record<string, unknown> = {
  dryRun: true,
  nodeId: 'abc123nonexistent',
  serverId: 'no-such-server',
  serverIp: '',
  traefikConfig: 'http: {}\n',
  env: '',
  path: 'dynamic/none.yml',
  host: null,
  enableDockerCleanup: false,
};

const scopeOf = (op: Operation & { scope?: Scope }) => op.scope;

const SECURITY_BEGIN = "<!-- generated by test/tenancy.test.ts from the procedures' declared scopes: do not edit by hand -->";
const SECURITY_END = '<!-- end of the generated section -->';

/** The generated section of docs/security.md: every operation on this machine, and the public ones. */
function scopeTable(operations: (Operation & { scope?: Scope })[]): string {
  const rows = (pick: (s: Scope | undefined) => string | null) =>
    operations
      .map(op => ({ op, when: pick(op.scope) }))
      .filter(r => r.when !== null)
      .sort((x, y) => x.op.path.localeCompare(y.op.path))
      .map(r => `| \`${r.op.path}\` | ${r.when} |`);
  return [
    '| procedure | acts on this machine |',
    '|---|---|',
    ...rows(s => (s === 'instance' ? 'always' : typeof s === 'object' ? `when \`${s.host}\` is left out (or empty, null, \`"none"\`)` : null)),
    '',
    'Public: no credential; each says what it checks instead.',
    '',
    '| procedure |',
    '|---|',
    ...rows(s => (s === 'public' ? '' : null)).map(r => r.replace(/ \|\s+\|$/, ' |')),
    '',
  ].join('\n');
}

t.setTimeout(600_000);

t.test("this machine is the instance operators': a tenant's calls are refused by the scope, an operator's get past it", async t => {
  // No proxy, and cleanups of this machine off (startTestServer's default): no call here may change the engine other files share.
  const server = await startTestServer({ proxy: 'none' });
  t.teardown(() => server.destroy());
  const operator = await signUpAdmin(server);
  const a = operator.client;

  // The second tenant: invited into the instance's organization, makes its own, then leaves the first.
  const invited = await addMember(server, a, 'tenant@example.com', 'admin');
  const session = new Client(server.url, { token: invited.token });
  const made = await session.post('organization.create', { name: 'Tenant' });
  t.equal(made.status, 200, JSON.stringify(made.body));
  const key = await session.post('user.createApiKey', { name: 'tenant', metadata: { organizationId: made.body.id } });
  t.equal(key.status, 200, JSON.stringify(key.body));
  const b = new Client(server.url, { apiKey: key.body.key });
  t.equal((await a.post('user.remove', { userId: invited.userId })).status, 200, 'the tenant is no member of the instance organization');
  t.match((await b.get('user.get')).body, { organizationId: made.body.id, role: 'owner' }, 'and owns its own: an owner, not an instance operator');

  // The declarations, as the document carries them.
  const doc = (await a.get('settings.getOpenApiDocument')).body;
  const operations: (Operation & { scope?: Scope })[] = [];
  for (const op of await documentOperations(a)) {
    const declared = doc.paths[`/${op.path}`][op.method]['x-berth-scope'] as Scope | undefined;
    operations.push({ ...op, scope: declared });
  }
  t.same(
    operations.filter(op => scopeOf(op) === undefined).map(op => op.path),
    [],
    'every operation of the document declares its scope',
  );

  t.test('docs/security.md lists the procedures on this machine as they are declared', async t => {
    const docFile = new URL('../docs/security.md', import.meta.url);
    const page = readFileSync(docFile, 'utf8');
    const [head, rest] = page.split(SECURITY_BEGIN);
    t.ok(head !== undefined && rest !== undefined && rest.includes(SECURITY_END), 'the page has its generated section');
    const tail = rest!.slice(rest!.indexOf(SECURITY_END));
    const made = `${head}${SECURITY_BEGIN}\n${scopeTable(operations)}\n${tail}`;
    // BERTH_WRITE_DOCS=1 writes the section anew (after a scope changes).
    if (process.env.BERTH_WRITE_DOCS === '1') writeFileSync(docFile, made);
    t.equal(page, made, 'the generated section matches the declarations (BERTH_WRITE_DOCS=1 pnpm exec tap test/tenancy.test.ts writes it)');
  });

  t.test('an optional serverId is instance-scoped when left out, or says why not', async t => {
    const optional = operations.filter(op => op.schema.properties?.serverId && !(op.schema.required ?? []).includes('serverId'));
    t.ok(optional.length > 20, `${optional.length} operations take an optional serverId`);
    const wrong = optional.filter(op => {
      const s = scopeOf(op);
      const instance = s === 'instance' || (typeof s === 'object' && s.host === 'serverId');
      return !instance && !ORGANIZATION_WITHOUT_SERVER[op.path];
    });
    t.same(
      wrong.map(op => `${op.path} (${JSON.stringify(scopeOf(op))})`),
      [],
      'each acts on this machine for its operators alone, or is listed in ORGANIZATION_WITHOUT_SERVER with why',
    );
    const stale = Object.keys(ORGANIZATION_WITHOUT_SERVER).filter(path => !optional.some(op => op.path === path && scopeOf(op) === 'organization'));
    t.same(stale, [], 'every listed operation still takes an optional serverId with organization scope');
  });

  // Every call on this machine: the instance-scoped ones, and the host-scoped ones with their field left out.
  const onMachine = operations.filter(op => scopeOf(op) === 'instance' || typeof scopeOf(op) === 'object');
  t.ok(onMachine.length >= 30, `${onMachine.length} operations act on this machine`);
  const inputOf = (op: Operation) => {
    const input = goodValue('input', op.schema, {}) as Record<string, unknown>;
    for (const [k, v] of Object.entries(GOOD)) if (k in (op.schema.properties ?? {})) input[k] = v;
    const s = scopeOf(op);
    if (typeof s === 'object') delete input[s.host];
    return input;
  };
  const call = (c: Client, op: Operation, input: Record<string, unknown>): Promise<Reply> => (op.method === 'get' ? c.get(op.path, input) : c.post(op.path, input));

  let controls = 0;
  const tenant: string[] = [];
  const operatorWrong: string[] = [];
  // The tenant's first, all of them: a refusal changes nothing, so the operator's calls after see the same machine.
  await inPool(
    AT_ONCE,
    onMachine.map(op => async () => {
      const r = await call(b, op, inputOf(op));
      const ok = r.status === 403 && /Berth's own machine/.test(r.body?.message ?? '');
      if (!ok) tenant.push(`${op.path}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    }),
  );
  t.same(tenant, [], "the tenant is refused every one (403, naming Berth's own machine)");
  // The operator's one at a time: these act on this machine's (test) configuration.
  for (const op of onMachine) {
    const r = await call(a, op, inputOf(op));
    const expected = OPERATOR_ANSWERS[op.path];
    const passed = expected ? r.status === expected[0] : r.status >= 200 && r.status < 300;
    if (passed) controls++;
    else operatorWrong.push(`${op.path}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  }
  t.same(operatorWrong, [], 'the instance operator gets past the scope on every one (a 2xx, or the reason OPERATOR_ANSWERS names)');
  t.same(
    Object.keys(OPERATOR_ANSWERS).filter(path => !onMachine.some(op => op.path === path)),
    [],
    'every OPERATOR_ANSWERS entry is an operation on this machine',
  );
  t.comment(`positive controls: ${controls} of ${onMachine.length} operations on this machine answered the instance operator`);
  t.equal(controls, onMachine.length, 'every operation on this machine passed its positive control');

  t.test("the instance's organization stays: it operates this machine", async t => {
    const second = await a.post('organization.create', { name: 'Second of the operator' });
    t.equal(second.status, 200);
    const refused = await a.post('organization.delete', { organizationId: operator.organizationId });
    t.equal(refused.status, 409, JSON.stringify(refused.body));
    t.match(refused.body.message, /instance's organization/);
    t.equal((await a.get('organization.one', { organizationId: operator.organizationId })).status, 200, 'still there');
    t.equal((await a.post('organization.delete', { organizationId: second.body.id })).status, 200, 'another organization of the same owner goes (the positive control)');
  });
});
