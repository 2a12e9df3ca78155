// Environment and project reads list every kind's workloads in one query (plugins/workloads/src/
// summaries.ts): what that query answers must be exactly what each kind's own `list` answers
// (fields, values — timestamps to the millisecond, icons kept in JSON settings — and order), and a
// kind that gives no listSource is still listed through its `list`.
import t from 'tap';
import { startTestServer, signUpAdmin } from '@berth/core/testing';

t.test('one query lists every kind exactly as the kinds list themselves', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const suffix = Date.now().toString(36);
  const { project, environment } = (await client.post('project.create', { name: 'summaries' })).body;
  const environmentId = environment.environmentId;
  const staging = (await client.post('environment.create', { projectId: project.projectId, name: 'staging' })).body;
  const web = (await client.post('application.create', { name: 'web', environmentId, appName: `sum-web-${suffix}`, description: 'the site' })).body;
  t.equal((await client.post('application.update', { applicationId: web.applicationId, icon: 'data:image/png;base64,AAAA' })).status, 200);
  await client.post('application.create', { name: 'api', environmentId: staging.environmentId, appName: `sum-api-${suffix}` });
  await client.post('application.create', { name: 'worker', environmentId, appName: `sum-worker-${suffix}` });
  const stack = (await client.post('compose.create', { name: 'stack', environmentId, appName: `sum-stack-${suffix}`, composeType: 'docker-compose' })).body;
  t.equal((await client.post('compose.update', { composeId: stack.composeId, icon: 'data:image/svg+xml;base64,BBBB' })).status, 200);
  await client.post('postgres.create', { name: 'db', appName: `sum-db-${suffix}`, databaseName: 'db', databaseUser: 'u', databasePassword: 'pg-password-1', environmentId });
  await client.post('redis.create', { name: 'cache', appName: `sum-cache-${suffix}`, databasePassword: 'redis-password-1', environmentId: staging.environmentId });

  const { workloads, orm } = server.kernel.container.cradle as any;
  const em = orm.em.fork();
  const environmentIds = [environmentId, staging.environmentId];
  const collected: Map<string, Record<string, Record<string, unknown>[]>> = await workloads.collect(environmentIds, em);
  let listed = 0;
  for (const kind of workloads.kinds()) {
    t.ok(kind.listSource, `${kind.kind} is listed through the one query`);
    const own: Map<string, Record<string, unknown>[]> = await kind.list(environmentIds, em.fork());
    for (const id of environmentIds) {
      t.same(collected.get(id)![kind.listKey], own.get(id) ?? [], `${kind.kind} in ${id === environmentId ? 'production' : 'staging'}: the same entries, values and order as its own list`);
      listed += (own.get(id) ?? []).length;
    }
  }
  t.equal(listed, 6, 'every workload made above is listed');
  const production = collected.get(environmentId)!;
  t.match(
    production.applications,
    [
      { name: 'web', icon: 'data:image/png;base64,AAAA', description: 'the site' },
      { name: 'worker', icon: null },
    ],
    'oldest first, icons from the JSON settings',
  );
  t.match(production.compose, [{ composeId: stack.composeId, icon: 'data:image/svg+xml;base64,BBBB', composeStatus: String }]);
  t.match((production.applications![0] as { createdAt: string }).createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'timestamps as the API writes them');

  // A kind without a listSource (a third party's that keeps its records elsewhere) is listed through its list.
  const app = workloads.kinds().find((k: { listKey: string }) => k.listKey === 'applications');
  const source = app.listSource;
  Object.defineProperty(app, 'listSource', { value: undefined, configurable: true, writable: true });
  try {
    const fallback = await workloads.collect(environmentIds, orm.em.fork());
    t.same(fallback.get(environmentId).applications, production.applications, "the same entries through the kind's own list");
  } finally {
    Object.defineProperty(app, 'listSource', { value: source, configurable: true, writable: true });
  }

  const read = (await client.get('project.one', { projectId: project.projectId })).body;
  t.match(
    read.environments.find((e: { environmentId: string }) => e.environmentId === environmentId),
    { applications: [{ name: 'web' }, { name: 'worker' }], postgres: [{ name: 'db' }], compose: [{ name: 'stack' }] },
    'project.one lists them',
  );
});
