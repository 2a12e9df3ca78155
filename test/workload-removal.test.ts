// Deleting what holds workloads removes them through their kinds: a removed project,
// environment or organization leaves no service running on the engine and frees its ports
// (before, the rows went through foreign keys and the services kept running). A workload whose
// appName changed leaves no service under its former name either.
import t from 'tap';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, otherOrganization, freePort, engineGone, TEST_STATIC_IMAGE, type Client, runFinished } from '@berth/core/testing';

t.setTimeout(600_000);
const docker = new Docker();

/** An application serving HTTP on a host port of its own, deployed and running; answers its id and service name. */
async function runningApp(client: Client, environmentId: string, port: number) {
  const app = await client.post('application.create', { name: 'web', environmentId });
  if (app.status !== 200) throw new Error(JSON.stringify(app.body));
  const { applicationId, appName } = app.body as { applicationId: string; appName: string };
  await client.post('application.saveDockerProvider', { applicationId, dockerImage: TEST_STATIC_IMAGE });
  const published = await client.post('port.create', { applicationId, publishedPort: port, targetPort: 80, publishMode: 'host' });
  if (published.status !== 200) throw new Error(JSON.stringify(published.body));
  const done = await runFinished(client, 'application.deploy', { applicationId });
  if (done.status !== 'done') throw new Error(`deploy: ${done.errorMessage}`);
  return { applicationId, appName };
}

t.test('removing what holds workloads removes them through their kinds', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);

  t.test('project.remove: no service left, its port free again', async t => {
    const {
      body: { project, environment },
    } = await client.post('project.create', { name: 'Going away' });
    const port = await freePort();
    const { appName } = await runningApp(client, environment.environmentId, port);
    t.ok(await docker.getService(appName).inspect(), 'the service runs');
    t.teardown(() =>
      docker
        .getService(appName)
        .remove()
        .catch(() => {}),
    );

    t.equal((await client.post('project.remove', { projectId: project.projectId })).status, 200);
    t.equal(await engineGone(docker.getService(appName).inspect()), 'gone', 'the service is removed with the project');
    const {
      body: { environment: next },
    } = await client.post('project.create', { name: 'Next' });
    const taker = await client.post('application.create', { name: 'taker', environmentId: next.environmentId });
    const again = await client.post('port.create', { applicationId: taker.body.applicationId, publishedPort: port, targetPort: 80, publishMode: 'host' });
    t.equal(again.status, 200, 'the port is free for another application');
  });

  t.test("environment.remove: its workloads go, the project's others stay", async t => {
    const {
      body: { project, environment: production },
    } = await client.post('project.create', { name: 'Staged' });
    const staging = await client.post('environment.create', { projectId: project.projectId, name: 'staging' });
    const gone = await runningApp(client, staging.body.environmentId, await freePort());
    const kept = await runningApp(client, production.environmentId, await freePort());
    t.teardown(() =>
      Promise.all(
        [gone, kept].map(a =>
          docker
            .getService(a.appName)
            .remove()
            .catch(() => {}),
        ),
      ),
    );

    t.equal((await client.post('environment.remove', { environmentId: staging.body.environmentId })).status, 200);
    t.equal(await engineGone(docker.getService(gone.appName).inspect()), 'gone', 'the staging service is removed');
    t.equal((await client.get('application.one', { applicationId: gone.applicationId })).status, 404, 'and its record');
    t.ok(await docker.getService(kept.appName).inspect(), "production's service still runs");
    t.equal((await client.get('application.one', { applicationId: kept.applicationId })).status, 200);
  });

  t.test('a changed appName: the next deploy moves the service to the new name; a delete before that removes the former one', async t => {
    const {
      body: { environment },
    } = await client.post('project.create', { name: 'Renamed' });
    const first = await runningApp(client, environment.environmentId, await freePort());
    const renamed = `${first.appName}-v2`;
    t.teardown(() =>
      Promise.all(
        [first.appName, renamed].map(n =>
          docker
            .getService(n)
            .remove()
            .catch(() => {}),
        ),
      ),
    );
    t.equal((await client.post('application.update', { applicationId: first.applicationId, appName: renamed })).status, 200);
    t.ok(await docker.getService(first.appName).inspect(), 'renaming alone leaves the running service');
    const redeployed = await runFinished(client, 'application.deploy', { applicationId: first.applicationId });
    t.equal(redeployed.status, 'done', redeployed.errorMessage ?? '');
    t.ok(await docker.getService(renamed).inspect(), 'the service of the new name runs');
    t.equal(await engineGone(docker.getService(first.appName).inspect()), 'gone', 'the service of the former name is removed');

    const second = await runningApp(client, environment.environmentId, await freePort());
    t.teardown(() =>
      docker
        .getService(`${second.appName}-v2`)
        .remove()
        .catch(() => {}),
    );
    t.equal((await client.post('application.update', { applicationId: second.applicationId, appName: `${second.appName}-v2` })).status, 200);
    t.equal((await client.post('application.delete', { applicationId: second.applicationId })).status, 200);
    t.equal(await engineGone(docker.getService(second.appName).inspect()), 'gone', 'deleting a renamed application removes the service it still runs under its former name');
  });

  t.test("organization.delete: its workloads go, other organizations' stay", async t => {
    const other = await otherOrganization(server, userId);
    const {
      body: { environment },
    } = await other.client.post('project.create', { name: 'Tenant' });
    const doomed = await runningApp(other.client, environment.environmentId, await freePort());
    const {
      body: { environment: mine },
    } = await client.post('project.create', { name: 'Mine' });
    const survivor = await runningApp(client, mine.environmentId, await freePort());
    t.teardown(() =>
      Promise.all(
        [doomed, survivor].map(a =>
          docker
            .getService(a.appName)
            .remove()
            .catch(() => {}),
        ),
      ),
    );

    const deleted = await client.post('organization.delete', { organizationId: other.organizationId });
    t.equal(deleted.status, 200, JSON.stringify(deleted.body));
    t.equal(await engineGone(docker.getService(doomed.appName).inspect()), 'gone', "the organization's service is removed");
    t.ok(await docker.getService(survivor.appName).inspect(), "another organization's service still runs");
  });
});
