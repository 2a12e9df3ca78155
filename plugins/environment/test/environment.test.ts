// environment.* through the real kernel, a real PostgreSQL database and both wire forms.
import t from 'tap';
import { startTestServer, signUpAdmin, otherOrganization, Client } from '@berth/core/testing';
import { Member, roleGrants } from '@berth/core';

// These operations queue no jobs: no scheduler, so each server stops at once.
const start = () => startTestServer({ jobs: false });

// One list per registered workload kind, and the peer's lists no kind serves yet.
const workloadLists = { applications: [], postgres: [], mysql: [], mariadb: [], mongo: [], redis: [], compose: [], libsql: [] };
/** What create, update, duplicate and remove answer (as the peer does): the environment's own fields, no lists. */
const noLists = (body: Record<string, unknown>) => Object.keys(workloadLists).filter(k => k in body);
const names = (list: { name: string }[]) => list.map(e => e.name);

t.test('environment operations', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);

  /** A project of its own for each subtest: its default environment and a "staging" one. */
  const shop = async (name: string) => {
    const created = await client.post('project.create', { name });
    if (created.status !== 200) throw new Error(`project.create: ${created.status} ${JSON.stringify(created.body)}`);
    const { project, environment: production } = created.body;
    const staging = await client.post('environment.create', { projectId: project.projectId, name: 'staging', description: 'pre-production' });
    if (staging.status !== 200) throw new Error(`environment.create: ${staging.status} ${JSON.stringify(staging.body)}`);
    return { project, projectId: project.projectId as string, production, staging: staging.body };
  };

  t.test("create answers the new environment's fields; one lists its (empty) workloads and its project", async t => {
    const { project, projectId } = await shop('Created');
    const made = await client.post('environment.create', { projectId, name: 'preview', description: 'per branch' });
    t.equal(made.status, 200);
    t.match(made.body, { name: 'preview', description: 'per branch', env: '', projectId, isDefault: false, environmentId: String, createdAt: String });
    t.same(noLists(made.body), [], 'no workload lists in the answer of create');
    const one = await client.get('environment.one', { environmentId: made.body.environmentId });
    t.match(one.body, { ...made.body, ...workloadLists, project: { projectId, name: project.name, organizationId: project.organizationId, env: project.env } });
  });

  t.test('create: names are unique within a project', async t => {
    const { projectId } = await shop('Unique');
    const dup = await client.post('environment.create', { projectId, name: 'staging' });
    t.equal(dup.status, 409);
    t.equal(dup.body.code, 'CONFLICT');
    t.match(dup.body.message, /staging/);
    t.equal((await client.post('environment.create', { projectId, name: 'production' })).status, 409, 'production exists in every project');
    const elsewhere = (await client.post('project.create', { name: 'Blog' })).body.project.projectId;
    t.equal((await client.post('environment.create', { projectId: elsewhere, name: 'staging' })).status, 200, 'the same name in another project is fine');
    t.equal((await client.post('environment.create', { projectId: 'missing', name: 'x' })).status, 404, 'the project must exist');
  });

  t.test('one answers the environment with its workloads, over REST and tRPC', async t => {
    const { staging, project } = await shop('One');
    const one = await client.get('environment.one', { environmentId: staging.environmentId });
    t.equal(one.status, 200);
    t.same(one.body, { ...staging, ...workloadLists, project });
    const trpc = await client.trpc('query', 'environment.one', { environmentId: staging.environmentId });
    t.equal(trpc.status, 200);
    t.same(trpc.body.result.data.json, one.body);
  });

  t.test('byProjectId lists the default environment first', async t => {
    const { projectId, production } = await shop('Listed');
    const res = await client.get('environment.byProjectId', { projectId });
    t.equal(res.status, 200);
    t.same(names(res.body), ['production', 'staging']);
    t.match(res.body[0], { environmentId: production.environmentId, isDefault: true, ...workloadLists, project: { projectId } });
    t.equal((await client.get('environment.byProjectId', { projectId: 'missing' })).status, 404);
  });

  t.test('update changes the given fields; names stay unique; the default keeps its name', async t => {
    const { projectId, production } = await shop('Updated');
    const qa = (await client.post('environment.create', { projectId, name: 'qa' })).body;
    const res = await client.post('environment.update', { environmentId: qa.environmentId, name: 'qa-2', env: 'DEBUG=1', description: 'tests' });
    t.equal(res.status, 200);
    t.match(res.body, { environmentId: qa.environmentId, name: 'qa-2', env: 'DEBUG=1', description: 'tests', isDefault: false });
    t.same(noLists(res.body), [], 'no workload lists in the answer of update');
    t.equal((await client.get('environment.one', { environmentId: qa.environmentId })).body.env, 'DEBUG=1');
    const taken = await client.post('environment.update', { environmentId: qa.environmentId, name: 'staging' });
    t.equal(taken.status, 409, 'renaming onto an existing name is a conflict');
    t.equal((await client.post('environment.update', { environmentId: qa.environmentId, name: 'qa-2' })).status, 200, 'keeping its own name is fine');
    const renameDefault = await client.post('environment.update', { environmentId: production.environmentId, name: 'live' });
    t.equal(renameDefault.status, 400);
    t.match(renameDefault.body.message, /default environment/);
    const envOfDefault = await client.post('environment.update', { environmentId: production.environmentId, env: 'PROD=1' });
    t.equal(envOfDefault.status, 200, "the default environment's variables can change");
    t.equal(envOfDefault.body.name, 'production');
    t.equal((await client.post('environment.update', { environmentId: 'missing', env: '' })).status, 404);
  });

  t.test('duplicate makes a new environment in the same project with the same variables', async t => {
    const { projectId, production, staging } = await shop('Duplicated');
    await client.post('environment.update', { environmentId: staging.environmentId, env: 'S=1' });
    const res = await client.post('environment.duplicate', { environmentId: staging.environmentId, name: 'staging-copy' });
    t.equal(res.status, 200);
    t.match(res.body, { name: 'staging-copy', projectId, env: 'S=1', description: 'pre-production', isDefault: false });
    t.same(noLists(res.body), [], 'no workload lists in the answer of duplicate');
    t.not(res.body.environmentId, staging.environmentId);
    const described = await client.post('environment.duplicate', { environmentId: production.environmentId, name: 'prod-copy', description: 'own' });
    t.match(described.body, { isDefault: false, description: 'own' }, 'a copy of the default is not the default');
    t.equal((await client.post('environment.duplicate', { environmentId: staging.environmentId, name: 'staging' })).status, 409);
    t.equal((await client.post('environment.duplicate', { environmentId: 'missing', name: 'x' })).status, 404);
  });

  t.test('remove answers the removed environment; the default one cannot be removed', async t => {
    const { projectId, production } = await shop('Removed');
    const tmp = (await client.post('environment.create', { projectId, name: 'tmp' })).body;
    const res = await client.post('environment.remove', { environmentId: tmp.environmentId });
    t.equal(res.status, 200);
    t.same(res.body, tmp);
    t.equal((await client.get('environment.one', { environmentId: tmp.environmentId })).status, 404);
    t.equal((await client.post('environment.remove', { environmentId: tmp.environmentId })).status, 404);
    const def = await client.post('environment.remove', { environmentId: production.environmentId });
    t.equal(def.status, 400);
    t.equal(def.body.code, 'BAD_REQUEST');
    t.equal(def.body.message, 'The default environment cannot be removed');
    t.equal((await client.get('environment.one', { environmentId: production.environmentId })).status, 200, 'still there');
  });

  t.test('search matches name or description, case-insensitively, within a project if asked', async t => {
    // Another organization of its own, so that only this subtest's environments can match.
    const { client: own } = await otherOrganization(server, userId);
    const make = async (projectName: string) => (await own.post('project.create', { name: projectName })).body.project.projectId as string;
    const projectId = await make('Searched');
    const other = await make('Elsewhere');
    t.equal((await own.post('environment.create', { projectId, name: 'staging', description: 'pre-production' })).status, 200);
    t.equal((await own.post('environment.create', { projectId, name: 'staging-copy', description: 'Pre-production too' })).status, 200);
    t.equal((await own.post('environment.create', { projectId, name: 'prod-copy' })).status, 200);
    t.equal((await own.post('environment.create', { projectId: other, name: 'Staging' })).status, 200);
    const res = await own.get('environment.search', { q: 'STAGING' });
    t.equal(res.status, 200);
    t.same(names(res.body.items).sort(), ['Staging', 'staging', 'staging-copy']);
    t.equal(res.body.total, 3);
    t.same(names((await own.get('environment.search', { q: 'staging', projectId })).body.items).sort(), ['staging', 'staging-copy']);
    t.same(names((await own.get('environment.search', { description: 'PRE-prod' })).body.items).sort(), ['staging', 'staging-copy']);
    t.same(names((await own.get('environment.search', { name: 'prod', projectId })).body.items).sort(), ['prod-copy', 'production']);
    const page = await own.get('environment.search', { projectId, limit: 2, offset: 1 });
    t.equal(page.body.items.length, 2);
    t.equal(page.body.total, 4, 'production, staging, staging-copy and prod-copy');
    t.equal((await own.get('environment.search', { limit: 500 })).status, 400);
  });

  t.test('validation: empty names and ids are 400s naming the field', async t => {
    const { projectId, staging } = await shop('Validated');
    const res = await client.post('environment.create', { projectId, name: '' });
    t.equal(res.status, 400);
    t.ok(
      res.body.issues.some((i: { path: string[] }) => i.path[0] === 'name'),
      'an issue names "name"',
    );
    const noProject = await client.post('environment.create', { name: 'x' });
    t.equal(noProject.status, 400);
    t.ok(noProject.body.issues.some((i: { path: string[] }) => i.path[0] === 'projectId'));
    t.equal((await client.post('environment.update', { environmentId: staging.environmentId, name: '' })).status, 400);
    t.equal((await client.post('environment.duplicate', { environmentId: staging.environmentId, name: '' })).status, 400);
    t.equal((await client.get('environment.one', { environmentId: '' })).status, 400);
  });

  t.test('another organization can neither read nor change these environments', async t => {
    const { projectId, staging } = await shop('Walled');
    const other = await otherOrganization(server, userId);
    const id = staging.environmentId;
    t.equal((await other.client.get('environment.one', { environmentId: id })).status, 404);
    t.equal((await other.client.get('environment.byProjectId', { projectId })).status, 404);
    t.equal((await other.client.post('environment.create', { projectId, name: 'intruder' })).status, 404);
    t.equal((await other.client.post('environment.update', { environmentId: id, name: 'hijacked' })).status, 404);
    t.equal((await other.client.post('environment.duplicate', { environmentId: id, name: 'stolen' })).status, 404);
    t.equal((await other.client.post('environment.remove', { environmentId: id })).status, 404);
    t.same((await other.client.get('environment.search', {})).body, { items: [], total: 0 });
    t.same((await other.client.get('environment.search', { projectId })).body, { items: [], total: 0 });
    t.equal((await client.get('environment.one', { environmentId: id })).body.name, 'staging', 'untouched');
  });

  t.test('a member cannot create or remove environments', async t => {
    const { project, projectId, staging } = await shop('Guarded');
    const { users, apiKeys } = server.kernel.container.cradle;
    const m = await users.createUser({ email: 'member@example.com', password: 'correct horse battery', role: 'member', organizationId: project.organizationId });
    // Every record of the organization, as members had before roles (the peer's defaults give none).
    await server.kernel.container.cradle.orm.em.fork().nativeUpdate(Member, { userId: m.userId }, { allRecords: true });
    const key = await apiKeys.createApiKey(
      { userId: m.userId, organizationId: project.organizationId, role: 'member', grants: roleGrants('member'), via: 'apiKey', credentialId: '' },
      { name: 'member', organizationId: project.organizationId },
    );
    const member = new Client(server.url, { apiKey: key.key });
    t.equal((await member.get('environment.byProjectId', { projectId })).status, 200);
    t.equal((await member.post('environment.create', { projectId, name: 'nope' })).status, 403);
    t.equal((await member.post('environment.remove', { environmentId: staging.environmentId })).status, 403);
  });
});

t.test('deleting an organization deletes its projects and environments', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const { client, userId, organizationId } = await signUpAdmin(server);
  const other = await otherOrganization(server, userId);
  const made = (await other.client.post('project.create', { name: 'Short-lived' })).body;
  await server.kernel.container.cradle.organizations.deleteOrganization({ userId, organizationId, role: 'owner', grants: roleGrants('owner'), via: 'apiKey', credentialId: '' }, other.organizationId);
  const { orm } = server.kernel.container.cradle;
  const left = await orm.em.getConnection().execute('select count(*)::int as n from environments where project_id = ?', [made.project.projectId]);
  t.equal(left[0]!.n, 0);
  t.same((await client.get('project.all')).body, []);
});

t.test('the directory other plugins use confines every lookup to one organization', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const { client, userId, organizationId } = await signUpAdmin(server);
  const other = await otherOrganization(server, userId);
  const { project, environment } = (await client.post('project.create', { name: 'Placed' })).body;
  const { environments, orm } = server.kernel.container.cradle;
  const em = orm.em.fork();
  t.match(await environments.defaultOf(project.projectId, organizationId, em), { environmentId: environment.environmentId, isDefault: true, name: 'production', organizationId });
  t.match(await environments.get(environment.environmentId, organizationId, em), { projectId: project.projectId, organizationId });
  await t.rejects(environments.defaultOf(project.projectId, other.organizationId, em), { code: 'NOT_FOUND' });
  await t.rejects(environments.get(environment.environmentId, other.organizationId, em), { code: 'NOT_FOUND' });
  t.same([...(await environments.listForProjects([project.projectId], other.organizationId, em)).values()], [[]], 'no environments of a foreign project');
  await t.rejects(environments.copyEnvironments(project.projectId, 'anything', other.organizationId, em), { code: 'NOT_FOUND' });
});
