// Project and environment env hold secrets (issue 13, finding 6): sealed at rest like an
// application's env, answered in clear, resolved in clear for deploys; rows stored before
// sealing are sealed at the next start.
import t from 'tap';
import pg from 'pg';
import { startTestServer, signUpAdmin, Client } from '@berth/core/testing';

t.test('project and environment env are sealed at rest, and rows stored in clear are sealed at the next start', async t => {
  const server = await startTestServer({ jobs: false });
  let current = server;
  t.teardown(() => current.destroy());
  const { client, apiKey, organizationId } = await signUpAdmin(server);
  const created = await client.post('project.create', { name: 'sealed', env: 'DB_PASSWORD=project-hunter2' });
  t.equal(created.status, 200);
  const { projectId } = created.body.project;
  const { environmentId } = created.body.environment;
  t.equal((await client.post('environment.update', { environmentId, env: 'API_TOKEN=environment-hunter2' })).status, 200);
  t.equal((await client.post('project.update', { projectId, env: 'DB_PASSWORD=project-hunter3' })).status, 200);

  const db = new pg.Client(server.database);
  await db.connect();
  t.teardown(() => db.end());
  const stored = async () => ({
    project: (await db.query('select env from projects where project_id = $1', [projectId])).rows[0].env as string,
    environment: (await db.query('select env from environments where environment_id = $1', [environmentId])).rows[0].env as string,
  });
  const atRest = await stored();
  t.match(atRest.project, /^v1:/, 'the project env is sealed');
  t.match(atRest.environment, /^v1:/, 'the environment env is sealed');
  t.notMatch(JSON.stringify(atRest), /hunter/, 'no secret in clear');

  t.equal((await client.get('project.one', { projectId })).body.env, 'DB_PASSWORD=project-hunter3', 'answered in clear');
  t.equal((await client.get('environment.one', { environmentId })).body.env, 'API_TOKEN=environment-hunter2');
  t.equal((await client.get('project.all')).body[0].environments[0].env, 'API_TOKEN=environment-hunter2', 'in lists too');
  const { environments, orm } = server.kernel.container.cradle;
  t.same(
    await environments.variables(environmentId, organizationId, orm.em.fork()),
    { project: 'DB_PASSWORD=project-hunter3', environment: 'API_TOKEN=environment-hunter2' },
    'deploys resolve references in clear',
  );
  const copy = await client.post('project.duplicate', { sourceEnvironmentId: environmentId, name: 'copy' });
  t.equal(copy.body.env, 'DB_PASSWORD=project-hunter3', 'a duplicate carries the env');
  t.notMatch((await db.query('select env from projects where project_id = $1', [copy.body.projectId])).rows[0].env, /hunter/, 'sealed too');

  // Rows as an earlier version stored them: in clear.
  await db.query('update projects set env = $1 where project_id = $2', ['OLD=project-clear', projectId]);
  await db.query('update environments set env = $1 where environment_id = $2', ['OLD=environment-clear', environmentId]);
  await db.end();
  current = await server.restart();
  const again = new pg.Client(current.database);
  await again.connect();
  t.teardown(() => again.end());
  const project = (await again.query('select env from projects where project_id = $1', [projectId])).rows[0].env as string;
  const environment = (await again.query('select env from environments where environment_id = $1', [environmentId])).rows[0].env as string;
  t.match(project, /^v1:/, 'the start sealed the project row');
  t.match(environment, /^v1:/, 'and the environment row');
  const after = new Client(current.url, { apiKey });
  t.equal((await after.get('project.one', { projectId })).body.env, 'OLD=project-clear', 'its value unchanged');
  t.equal((await after.get('environment.one', { environmentId })).body.env, 'OLD=environment-clear');
});
