// deployment.allCentralized and deployment.queueList across kinds: each deployment joined with its
// workload under the kind's name (with where it lives), and the unfinished ones as the peer's
// queue jobs with the path of the service's page. The server runs no jobs: the runs stay queued.
import t from 'tap';
import { startTestServer, signUpAdmin, otherOrganization, deploymentIdOf } from '@berth/core/testing';

t.test('allCentralized joins each deployment with its workload; queueList answers the queued runs as jobs', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);
  const suffix = Date.now().toString(36);
  const { project, environment } = (await client.post('project.create', { name: 'joins' })).body;
  const app = (await client.post('application.create', { name: 'web', environmentId: environment.environmentId, appName: `joins-web-${suffix}` })).body;
  const db = (
    await client.post('postgres.create', {
      name: 'db',
      appName: `joins-db-${suffix}`,
      databaseName: 'db',
      databaseUser: 'u',
      databasePassword: 'pg-password-1',
      environmentId: environment.environmentId,
    })
  ).body;
  const appRun = deploymentIdOf(await client.post('application.deploy', { applicationId: app.applicationId }));
  const dbRun = deploymentIdOf(await client.post('postgres.deploy', { postgresId: db.postgresId }));

  const all = (await client.get('deployment.allCentralized')).body as Record<string, any>[];
  const appEntry = all.find(d => d.deploymentId === appRun)!;
  const dbEntry = all.find(d => d.deploymentId === dbRun)!;
  const where = { environmentId: environment.environmentId, name: environment.name, project: { projectId: project.projectId, name: 'joins' } };
  t.match(appEntry, {
    applicationId: app.applicationId,
    application: { applicationId: app.applicationId, name: 'web', appName: app.appName, environment: where },
    postgres: null,
    server: null,
    buildServer: null,
  });
  t.match(dbEntry, { postgresId: db.postgresId, postgres: { postgresId: db.postgresId, name: 'db', appName: db.appName, environment: where }, application: null });
  t.notOk('databasePassword' in dbEntry.postgres, 'the join carries no credentials');
  t.ok(
    all.every(d => 'compose' in d),
    "every entry answers the peer's compose relation (null unless it is a stack's)",
  );

  const queue = (await client.get('deployment.queueList')).body as Record<string, any>[];
  t.same(
    queue.map(j => j.id),
    [dbRun, appRun],
    'the unfinished runs, newest first as the peer sorts its jobs',
  );
  t.match(queue[1], {
    name: 'deploy',
    state: 'waiting',
    timestamp: Number,
    data: { deploymentId: appRun, applicationId: app.applicationId, applicationType: 'application', type: 'deploy', server: false },
    servicePath: { href: `/dashboard/project/${project.projectId}/environment/${environment.environmentId}/services/application/${app.applicationId}`, label: 'Application' },
  });
  t.notOk('processedOn' in queue[1]!, 'a waiting job has not been processed');
  t.match(queue[0], { data: { postgresId: db.postgresId }, servicePath: { href: /\/services\/postgres\//, label: 'PostgreSQL' } });

  const other = await otherOrganization(server, userId);
  t.same((await other.client.get('deployment.allCentralized')).body, [], 'another organization sees none');
  t.same((await other.client.get('deployment.queueList')).body, []);
});
