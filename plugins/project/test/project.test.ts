// project.* through the real kernel, a real PostgreSQL database and both wire forms.
import t from 'tap';
import { startTestServer, signUpAdmin, createTestDatabase, otherOrganization, Client, type TestServer } from '@berth/core/testing';
import { createKernel, Member, roleGrants, type Principal } from '@berth/core';

// These operations queue no jobs: no scheduler, so each server stops at once.
const start = () => startTestServer({ jobs: false });

// One list per registered workload kind (compose registers with its plugin, which is not here yet).
const workloadLists = { applications: [], postgres: [], mysql: [], mariadb: [], mongo: [], redis: [] };

/** A plain member of the organization (not an admin), with an API key. */
async function member(server: TestServer, organizationId: string) {
  const { users, apiKeys } = server.kernel.container.cradle;
  const m = await users.createUser({ email: 'member@example.com', password: 'correct horse battery', role: 'member', organizationId });
  // Every record of the organization, as members had before roles (the peer's defaults give none).
  await server.kernel.container.cradle.orm.em.fork().nativeUpdate(Member, { userId: m.userId }, { allRecords: true });
  const principal: Principal = { userId: m.userId, organizationId, role: 'member', grants: roleGrants('member'), via: 'apiKey', credentialId: '' };
  const key = await apiKeys.createApiKey(principal, { name: 'member', organizationId });
  return new Client(server.url, { apiKey: key.key });
}

t.test('project operations', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const { client, userId, organizationId } = await signUpAdmin(server);

  const created = await client.post('project.create', { name: 'Shop', description: 'the web shop', env: 'A=1' });
  t.equal(created.status, 200);
  const { project, environment } = created.body;
  t.match(project, { name: 'Shop', description: 'the web shop', env: 'A=1', organizationId, projectId: String, createdAt: String });
  t.ok(!Number.isNaN(Date.parse(project.createdAt)), 'createdAt is an ISO date');
  t.match(environment, { name: 'production', isDefault: true, projectId: project.projectId, description: null, env: '', environmentId: String });
  t.same(
    Object.keys(workloadLists).filter(k => k in environment),
    [],
    "create answers the environment's own fields, as the peer does",
  );
  const listed = (await client.get('environment.one', { environmentId: environment.environmentId })).body;
  t.same(Object.fromEntries(Object.keys(workloadLists).map(k => [k, listed[k]])), workloadLists, 'the new environment lists the six registered (empty) workload kinds');

  t.test('create: description is optional and may be null', async t => {
    const bare = await client.post('project.create', { name: 'Bare' });
    t.equal(bare.status, 200);
    t.match(bare.body.project, { name: 'Bare', description: null, env: '' });
    const nulled = await client.post('project.create', { name: 'Nulled', description: null });
    t.equal(nulled.status, 200);
    t.equal(nulled.body.project.description, null);
  });

  t.test('one answers the project with its environments and their workloads', async t => {
    const one = await client.get('project.one', { projectId: project.projectId });
    t.equal(one.status, 200);
    t.match(one.body, { ...project, environments: [{ environmentId: environment.environmentId, name: 'production', isDefault: true, ...workloadLists }] });
    t.equal(one.body.environments.length, 1);
  });

  t.test("all lists the organization's projects, newest first, over REST and tRPC", async t => {
    const rest = await client.get('project.all');
    t.equal(rest.status, 200);
    t.ok(Array.isArray(rest.body));
    const shop = rest.body.find((p: { projectId: string }) => p.projectId === project.projectId);
    t.match(shop, { name: 'Shop', environments: [{ name: 'production', isDefault: true, ...workloadLists }] });
    const times = rest.body.map((p: { createdAt: string }) => Date.parse(p.createdAt));
    t.same(
      times,
      [...times].sort((a, b) => b - a),
      'newest first',
    );

    const trpc = await client.trpc('query', 'project.all');
    t.equal(trpc.status, 200);
    t.same(trpc.body.result.data.json, rest.body, 'the tRPC form answers the same list, wrapped');
    const trpcPlain = await client.raw('/api/trpc/project.all', { headers: { 'x-api-key': client.apiKey! } });
    t.equal(trpcPlain.status, 200);
    t.same(trpcPlain.body.result.data.json, rest.body, 'without any input parameter too');
  });

  t.test('create over tRPC', async t => {
    const res = await client.trpc('mutation', 'project.create', { name: 'Via tRPC' });
    t.equal(res.status, 200);
    t.match(res.body.result.data.json, { project: { name: 'Via tRPC' }, environment: { name: 'production', isDefault: true } });
  });

  t.test('update changes only the given fields', async t => {
    const p = (await client.post('project.create', { name: 'Before', description: 'kept', env: 'X=1' })).body.project;
    const res = await client.post('project.update', { projectId: p.projectId, name: 'After', env: 'X=2' });
    t.equal(res.status, 200);
    t.same(res.body, { ...p, name: 'After', env: 'X=2' });
    const cleared = await client.post('project.update', { projectId: p.projectId, description: null });
    t.equal(cleared.body.description, null);
    t.equal(cleared.body.name, 'After');
    // organizationId is not something a caller can change.
    const moved = await client.post('project.update', { projectId: p.projectId, organizationId: 'elsewhere' });
    t.equal(moved.status, 200);
    t.equal(moved.body.organizationId, organizationId);
    t.equal((await client.get('project.one', { projectId: p.projectId })).body.name, 'After');
  });

  t.test('remove answers the removed project and takes its environments', async t => {
    const made = (await client.post('project.create', { name: 'Doomed' })).body;
    const staging = await client.post('environment.create', { projectId: made.project.projectId, name: 'staging' });
    t.equal(staging.status, 200);
    const res = await client.post('project.remove', { projectId: made.project.projectId });
    t.equal(res.status, 200);
    t.same(res.body, made.project);
    t.equal((await client.get('project.one', { projectId: made.project.projectId })).status, 404);
    t.equal((await client.get('environment.one', { environmentId: made.environment.environmentId })).status, 404, 'the default environment went with it');
    t.equal((await client.get('environment.one', { environmentId: staging.body.environmentId })).status, 404, 'and every other one');
    t.notOk((await client.get('project.all')).body.some((p: { projectId: string }) => p.projectId === made.project.projectId));
    t.equal((await client.post('project.remove', { projectId: made.project.projectId })).status, 404, 'a second remove is NOT_FOUND');
  });

  t.test('duplicate copies the environments into a new project', async t => {
    const src = (await client.post('project.create', { name: 'Source', env: 'SHARED=1' })).body;
    await client.post('environment.update', { environmentId: src.environment.environmentId, env: 'PROD=1' });
    await client.post('environment.create', { projectId: src.project.projectId, name: 'staging', description: 'pre-prod' });
    const res = await client.post('project.duplicate', { sourceEnvironmentId: src.environment.environmentId, name: 'Copy', description: 'a copy' });
    t.equal(res.status, 200);
    t.match(res.body, { name: 'Copy', description: 'a copy', env: 'SHARED=1', organizationId });
    t.not(res.body.projectId, src.project.projectId);
    t.match(res.body.environments, [
      { name: 'production', isDefault: true, env: 'PROD=1', projectId: res.body.projectId, ...workloadLists },
      { name: 'staging', isDefault: false, description: 'pre-prod', projectId: res.body.projectId },
    ]);
    t.equal(res.body.environments.length, 2);
    t.not(res.body.environments[0].environmentId, src.environment.environmentId, 'new environments, not moved ones');
    const source = await client.get('project.one', { projectId: src.project.projectId });
    t.equal(source.body.environments.length, 2, 'the source keeps its environments');
  });

  t.test('duplicate in the same project adds a copy of the environment', async t => {
    const src = (await client.post('project.create', { name: 'Single' })).body;
    await client.post('environment.update', { environmentId: src.environment.environmentId, env: 'K=V' });
    const res = await client.post('project.duplicate', { sourceEnvironmentId: src.environment.environmentId, name: 'preview', duplicateInSameProject: true });
    t.equal(res.status, 200);
    t.equal(res.body.projectId, src.project.projectId);
    t.match(res.body.environments, [
      { name: 'production', isDefault: true },
      { name: 'preview', isDefault: false, env: 'K=V' },
    ]);
    const again = await client.post('project.duplicate', { sourceEnvironmentId: src.environment.environmentId, name: 'preview', duplicateInSameProject: true });
    t.equal(again.status, 409, 'the name is taken in that project');
    t.equal((await client.post('project.duplicate', { sourceEnvironmentId: 'nope', name: 'X' })).status, 404);
  });

  t.test('search matches name or description, case-insensitively, with paging', async t => {
    // An organization of its own, so that only these projects can match.
    const { client } = await otherOrganization(server, userId);
    for (const [name, description] of [
      ['Alpha API', 'billing backend'],
      ['Beta site', 'Marketing pages'],
      ['gamma', 'API gateway'],
      ['100%_literal', null],
    ]) {
      t.equal((await client.post('project.create', { name, description })).status, 200);
    }
    const q = await client.get('project.search', { q: 'api' });
    t.equal(q.status, 200);
    t.same(q.body.items.map((p: { name: string }) => p.name).sort(), ['Alpha API', 'gamma']);
    t.equal(q.body.total, 2);
    t.same(
      (await client.get('project.search', { name: 'BETA' })).body.items.map((p: { name: string }) => p.name),
      ['Beta site'],
    );
    t.same(
      (await client.get('project.search', { description: 'marketing' })).body.items.map((p: { name: string }) => p.name),
      ['Beta site'],
    );
    t.same(
      (await client.get('project.search', { q: '%_' })).body.items.map((p: { name: string }) => p.name),
      ['100%_literal'],
      '% and _ are literal',
    );
    const page = await client.get('project.search', { q: 'a', limit: 1, offset: 1 });
    t.equal(page.body.items.length, 1);
    t.equal(page.body.total, 4, 'every one of them has an "a"');
    for (let i = 0; i < 17; i++) await client.post('project.create', { name: `filler ${i}` });
    const everything = await client.get('project.search', {});
    t.equal(everything.body.total, 21, 'no filter: every project');
    t.equal((await client.get('project.all')).body.length, 21);
    t.equal(everything.body.items.length, 20, 'limit defaults to 20');
    t.equal((await client.get('project.search', { limit: 0 })).status, 400);
    t.equal((await client.get('project.search', { limit: 101 })).status, 400);
  });

  t.test('missing ids are NOT_FOUND', async t => {
    for (const [op, input] of [
      ['project.one', { projectId: 'missing' }],
      ['project.update', { projectId: 'missing', name: 'x' }],
      ['project.remove', { projectId: 'missing' }],
    ] as const) {
      const res = op === 'project.one' ? await client.get(op, input) : await client.post(op, input);
      t.equal(res.status, 404, op);
      t.equal(res.body.code, 'NOT_FOUND', op);
    }
  });

  t.test('validation: an empty name is a 400 naming the field', async t => {
    const res = await client.post('project.create', { name: '' });
    t.equal(res.status, 400);
    t.equal(res.body.code, 'BAD_REQUEST');
    t.ok(
      res.body.issues.some((i: { path: string[] }) => i.path[0] === 'name'),
      'an issue names "name"',
    );
    const missing = await client.post('project.create', {});
    t.equal(missing.status, 400);
    t.ok(missing.body.issues.some((i: { path: string[] }) => i.path[0] === 'name'));
    const update = await client.post('project.update', { projectId: project.projectId, name: '' });
    t.equal(update.status, 400);
    t.ok(update.body.issues.some((i: { path: string[] }) => i.path[0] === 'name'));
    t.equal((await client.get('project.one', {})).status, 400, 'projectId is required');
  });

  t.test('another organization sees none of these projects', async t => {
    const other = await otherOrganization(server, userId);
    const id = project.projectId;
    t.equal((await other.client.get('project.one', { projectId: id })).status, 404);
    t.equal((await other.client.post('project.update', { projectId: id, name: 'hijacked' })).status, 404);
    t.equal((await other.client.post('project.remove', { projectId: id })).status, 404);
    t.equal((await other.client.post('project.duplicate', { sourceEnvironmentId: environment.environmentId, name: 'stolen' })).status, 404);
    t.equal((await other.client.post('project.duplicate', { sourceEnvironmentId: environment.environmentId, name: 'stolen', duplicateInSameProject: true })).status, 404);
    t.same((await other.client.get('project.all')).body, []);
    t.same((await other.client.get('project.search', { q: 'Shop' })).body, { items: [], total: 0 });
    const own = await other.client.post('project.create', { name: 'Theirs' });
    t.equal(own.body.project.organizationId, other.organizationId);
    t.same(
      (await other.client.get('project.all')).body.map((p: { name: string }) => p.name),
      ['Theirs'],
    );
    t.notOk(
      (await client.get('project.all')).body.some((p: { name: string }) => p.name === 'Theirs'),
      'and the first organization does not see theirs',
    );
    t.equal((await client.get('project.one', { projectId: id })).body.name, 'Shop', 'the project is untouched');
  });

  t.test("allForPermissions and homeStats: the organization's projects as the peer's permission form and home page read them", async t => {
    const made = (await client.post('project.create', { name: 'Overview' })).body;
    const envId = made.environment.environmentId;
    const app = (await client.post('application.create', { name: 'web', environmentId: envId })).body;
    const db = (await client.post('postgres.create', { name: 'db', environmentId: envId, databaseName: 'd', databaseUser: 'u', databasePassword: 'secret-password' })).body;
    t.teardown(async () => {
      await client.post('project.remove', { projectId: made.project.projectId });
    });
    const all = await client.get('project.allForPermissions');
    t.equal(all.status, 200, JSON.stringify(all.body));
    const entry = all.body.find((p: { projectId: string }) => p.projectId === made.project.projectId);
    t.same(Object.keys(entry).sort(), ['environments', 'name', 'projectId'], "a project's id and name, and its environments");
    t.match(entry.environments, [{ environmentId: envId, name: 'production', isDefault: true }]);
    const environment0 = entry.environments[0];
    t.same(
      environment0.applications.map((a: Record<string, unknown>) => Object.keys(a).sort()),
      [['appName', 'applicationId', 'applicationStatus', 'createdAt', 'description', 'name', 'serverId']],
      "each workload's id, names, creation, status and server, as the peer's",
    );
    t.match(environment0.applications[0], { applicationId: app.applicationId, name: 'web', applicationStatus: 'idle', serverId: null });
    t.match(environment0.postgres, [{ postgresId: db.postgresId, name: 'db' }]);
    t.same(environment0.compose, [], 'an empty list for a kind with no workload here');
    const trpc = await client.trpc('query', 'project.allForPermissions', {});
    t.same(trpc.body.result.data.json, all.body, 'tRPC answers the same');

    const stats = (await client.get('project.homeStats')).body;
    const projects = (await client.get('project.all')).body as { environments: unknown[] }[];
    t.match(stats, { projects: projects.length, environments: projects.flatMap(p => p.environments).length, applications: 1, compose: 0, databases: 1, services: 2 });
    t.same(stats.status, { running: 0, error: 0, idle: 2 }, 'neither has been deployed: idle');
    const other = await otherOrganization(server, userId);
    t.match((await other.client.get('project.homeStats')).body, { projects: 0, environments: 0, services: 0 }, "another organization's are its own");
    t.same((await other.client.get('project.allForPermissions')).body, []);
  });

  t.test('members read; only admins create, duplicate and remove', async t => {
    const m = await member(server, organizationId);
    t.equal((await m.get('project.one', { projectId: project.projectId })).status, 200);
    t.equal((await m.get('project.all')).status, 200);
    t.equal((await m.get('project.homeStats')).status, 200, 'a member reads the home figures');
    t.equal((await m.get('project.allForPermissions')).status, 403, "a member cannot read what access is granted from (the peer's member.update permission)");
    t.equal((await m.post('project.create', { name: 'Nope' })).status, 403);
    t.equal((await m.post('project.duplicate', { sourceEnvironmentId: environment.environmentId, name: 'Nope' })).status, 403);
    t.equal((await m.post('project.remove', { projectId: project.projectId })).status, 403);
    t.equal((await new Client(server.url).get('project.all')).status, 401, 'and nobody without a credential');
  });
});

t.test('project.all answers in a fixed number of queries, whatever the number of projects', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const logger = server.kernel.container.cradle.orm.config.getLogger();
  const queriesOf = async (op: () => Promise<unknown>) => {
    const original = logger.logQuery;
    let n = 0;
    logger.logQuery = ctx => {
      n++;
      original.call(logger, ctx);
    };
    try {
      await op();
    } finally {
      logger.logQuery = original;
    }
    return n;
  };
  const createProjects = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const res = await client.post('project.create', { name: `p${i}` });
      if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    }
  };
  await client.get('project.all'); // warm the credential cache
  await createProjects(2);
  const few = await queriesOf(() => client.get('project.all'));
  await createProjects(198);
  const many = await queriesOf(() => client.get('project.all'));
  t.equal(many, few, `${few} queries for 2 projects, ${many} for 200`);
  const listers = server.kernel.container.cradle.workloads.kinds().length; // at most one query per registered workload kind
  t.ok(many <= 2 + listers, `${many} queries: projects, environments and at most one per workload kind`);

  const all = await client.get('project.all');
  t.equal(all.body.length, 200);
  t.ok(all.body.every((p: { environments: unknown[] }) => p.environments.length === 1));

  // Its speed is measured by bench/api.ts, not here: a timed assertion fails on a busy machine.
});

t.test('a kernel with the project plugin but not the environment plugin refuses to start', async t => {
  const db = await createTestDatabase();
  const dataDir = t.testdir();
  t.teardown(() => db.drop());
  await t.rejects(createKernel({ env: {}, config: { databaseUrl: db.url, dataDir, plugins: ['project'], jobs: false, logLevel: 'silent', port: 0 } }), /needs the environment plugin/);
});
