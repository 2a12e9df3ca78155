// The mongo kind end to end as far as these machines allow: no mongod image exists here and none
// can be pulled, so the records through the API in both variants, the Swarm service Berth really
// creates for a mongo database (read back from the engine, with a stand-in image whose container
// runs but never answers mongosh), and a deploy of an image nobody has, which must fail at once.
import t from 'tap';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, Client, TEST_BASE_IMAGE, waitFor, freePort, deploymentFinished, removeServiceAndVolume, engineGone, deploymentIdOf } from '@berth/core/testing';
import { dataVolumeOf } from '@berth/plugin-workloads';

/** The test servers run with the config key platformNetwork at its default. */
const PLATFORM_NETWORK = 'berth-network';

const docker = new Docker();
const suffix = () => Math.random().toString(36).slice(2, 8);
const issuePaths = (body: { issues?: { path: (string | number)[] }[] }) => (body.issues ?? []).map(i => i.path.join('.'));

t.test('mongo (no mongod on these machines: the API and the service spec only)', async t => {
  // Two deployments wait on readiness at once below; the unpullable one must not queue behind them.
  const server = await startTestServer({ deploySettleSeconds: 0, deployConcurrency: 2 });
  t.teardown(() => server.destroy());
  const { client, token } = await signUpAdmin(server);
  const bearer = new Client(server.url, { token });
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Engine' });

  t.test('create, one and update in both variants', async t => {
    // A project of its own: project.one below lists exactly what this test made.
    const {
      body: { project, environment },
    } = await client.post('project.create', { name: 'Docs' });
    const current = await client.post('mongo.create', {
      name: 'catalog',
      environmentId: environment.environmentId,
      databaseUser: 'catalog',
      databasePassword: 'Mongo_pw-1',
      databaseName: 'ignored',
      replicaSets: false,
    });
    t.equal(current.status, 200, JSON.stringify(current.body));
    t.match(current.body, {
      mongoId: String,
      name: 'catalog',
      databaseUser: 'catalog',
      databasePassword: 'Mongo_pw-1',
      dockerImage: 'mongo:15',
      environmentId: environment.environmentId,
      applicationStatus: 'idle',
      externalPort: null,
      replicas: 1,
    });
    t.notOk('databaseName' in current.body, 'mongo has no databaseName (a sent one is dropped)');
    t.notOk('databaseRootPassword' in current.body, 'nor a root password: its user is the root user');

    const bad = await client.post('mongo.create', { name: 'x', environmentId: environment.environmentId, databaseUser: 'u', databasePassword: 'has space' });
    t.equal(bad.status, 400, 'the current variant restricts the password like the peer');
    t.same(issuePaths(bad.body), ['databasePassword']);
    const emptyUser = await client.post('mongo.create', { name: 'x', environmentId: environment.environmentId, databaseUser: '', databasePassword: 'pw' });
    t.equal(emptyUser.status, 400);
    t.same(issuePaths(emptyUser.body), ['databaseUser']);

    const older = await bearer.post('mongo.create', { name: 'legacy', appName: `legacy-${suffix()}`, projectId: project.projectId, databaseUser: 'legacy', databasePassword: 'p@ss:w/rd "x"' });
    t.equal(older.status, 200, JSON.stringify(older.body));
    t.match(
      older.body,
      { environmentId: environment.environmentId, dockerImage: 'mongo:15', databaseUser: 'legacy', databasePassword: 'p@ss:w/rd "x"' },
      "older variant: any password, the project's default environment",
    );
    const defaulted = await bearer.post('mongo.create', { name: 'no user', projectId: project.projectId, databasePassword: 'pw' });
    t.equal(defaulted.status, 200);
    t.equal(defaulted.body.databaseUser, 'mongo', "a missing databaseUser becomes the driver's default user");

    const one = await bearer.get('mongo.one', { mongoId: older.body.mongoId });
    t.equal(one.status, 200);
    t.equal(one.body.internalConnectionUrl, `mongodb://legacy:${encodeURIComponent('p@ss:w/rd "x"')}@${older.body.appName}:27017`, "credentials encoded, the appName and mongo's port");
    t.equal(one.body.externalConnectionUrl, null);
    t.match(one.body, { mounts: [], backups: [], environment: { environmentId: environment.environmentId, project: { projectId: project.projectId, name: 'Docs' } } });

    t.equal((await client.post('mongo.saveExternalPort', { mongoId: older.body.mongoId, externalPort: 47017 })).status, 200);
    const published = await client.get('mongo.one', { mongoId: older.body.mongoId });
    t.match(published.body.externalConnectionUrl, /^mongodb:\/\/legacy:[^@]+@[^:/]+:47017$/);

    const updated = await bearer.post('mongo.update', {
      mongoId: current.body.mongoId,
      databaseUser: 'catalog2',
      databasePassword: 'Mongo_pw-2',
      dockerImage: 'mongo:7',
      memoryLimit: 268435456,
      cpuLimit: '0.5',
    });
    t.equal(updated.status, 200, JSON.stringify(updated.body));
    t.equal(updated.body, true, 'update answers true, as the peer does');
    t.match((await client.get('mongo.one', { mongoId: current.body.mongoId })).body, {
      databaseUser: 'catalog2',
      databasePassword: 'Mongo_pw-2',
      dockerImage: 'mongo:7',
      memoryLimit: '268435456',
      cpuLimit: '0.5',
    });
    const updatedBad = await client.post('mongo.update', { mongoId: current.body.mongoId, databasePassword: "it's" });
    t.equal(updatedBad.status, 400, 'update follows the current rules');
    t.same(issuePaths(updatedBad.body), ['databasePassword']);
    const rootChange = await client.post('mongo.changePassword', { mongoId: current.body.mongoId, password: 'Other_pw-1', type: 'root' });
    t.equal(rootChange.status, 400, 'no separate root password');
    t.same(issuePaths(rootChange.body), ['type']);
    const listed = (await client.get('project.one', { projectId: project.projectId })).body.environments[0].mongo as Record<string, unknown>[];
    t.same(listed.map(m => m.name).sort(), ['catalog', 'legacy', 'no user'], 'project.one lists them under the environment');
    t.notOk(
      listed.some(m => 'databasePassword' in m),
      'without passwords',
    );
  });

  t.test('the Swarm service Berth creates for a mongo database', async t => {
    // The busybox stand-in runs but has no mongosh: Berth must keep waiting for readiness, not call it done.
    const appName = `mongo-spec-${suffix()}`;
    const detachedName = `mongo-detached-${suffix()}`;
    t.teardown(() => Promise.all([removeServiceAndVolume(appName), removeServiceAndVolume(detachedName)]));
    const port = await freePort();
    const make = async (name: string, extra: Record<string, unknown>) => {
      const created = await client.post('mongo.create', {
        name,
        appName: name,
        environmentId: environment.environmentId,
        databaseUser: 'spec_user',
        databasePassword: 'Spec_pw-1',
        dockerImage: TEST_BASE_IMAGE,
      });
      t.equal(created.status, 200, JSON.stringify(created.body));
      const id = created.body.mongoId as string;
      const set = await client.post('mongo.update', {
        mongoId: id,
        command: 'sleep',
        args: ['600'],
        stopGracePeriodSwarm: 1_000_000_000,
        env: 'EXTRA=from-user\nMONGO_INITDB_ROOT_USERNAME=overridden',
        ...extra,
      });
      t.equal(set.status, 200, JSON.stringify(set.body));
      return { id, deploymentId: deploymentIdOf(await client.post('mongo.deploy', { mongoId: id })) };
    };
    const main = await make(appName, { externalPort: port });
    const detached = await make(detachedName, { detachDokployNetwork: true });

    const running = async (name: string) =>
      waitFor(`${name}'s task`, async () => {
        // The engine answers 404 until the deployment has created the service.
        const tasks = await docker.listTasks({ filters: JSON.stringify({ service: [name], 'desired-state': ['running'] }) }).catch(() => []);
        return tasks.some(task => task.Status?.State === 'running');
      });
    await running(appName);
    await running(detachedName);

    const spec = (await docker.getService(appName).inspect()).Spec;
    const container = spec.TaskTemplate.ContainerSpec;
    t.match(container.Image, /^berth-test\/busybox:1/, "the record's image");
    t.same(container.Command, ['sleep'], "the user's command replaces the entrypoint");
    t.same(container.Args, ['600']);
    const env = container.Env as string[];
    t.ok(env.includes('MONGO_INITDB_ROOT_USERNAME=spec_user'), "the driver's user wins over the user's env of the same name");
    t.ok(env.includes('MONGO_INITDB_ROOT_PASSWORD=Spec_pw-1'), "the driver's password variable");
    t.ok(env.includes('EXTRA=from-user'), "the user's own variables too");
    t.notOk(env.includes('MONGO_INITDB_ROOT_USERNAME=overridden'));
    t.match(container.Mounts, [{ Type: 'volume', Source: dataVolumeOf('mongo', main.id), Target: '/data/db' }], "the data volume at mongo's data path");
    t.same(spec.EndpointSpec?.Ports, [{ Protocol: 'tcp', TargetPort: 27017, PublishedPort: port, PublishMode: 'host' }], 'the internal port published on the external one');
    t.equal(spec.UpdateConfig?.Order, 'stop-first', 'one task holds the data volume at a time');
    t.match(spec.Labels, { 'berth.kind': 'mongo', 'berth.id': main.id });
    const platform = await docker.getNetwork(PLATFORM_NETWORK).inspect();
    const networksOf = (s: typeof spec) => (s.TaskTemplate.Networks ?? []).map((n: { Target: string }) => n.Target);
    t.ok(
      networksOf(spec).some((n: string) => n === platform.Id || n === PLATFORM_NETWORK),
      'on the platform network',
    );
    const detachedSpec = (await docker.getService(detachedName).inspect()).Spec;
    t.notOk(
      networksOf(detachedSpec).some((n: string) => n === platform.Id || n === PLATFORM_NETWORK),
      'detachDokployNetwork: not on the platform network',
    );
    t.same(detachedSpec.EndpointSpec?.Ports ?? [], [], 'no external port, nothing published');

    const stillWaiting = await client.get('deployment.one', { deploymentId: main.deploymentId });
    t.equal(stillWaiting.body.status, 'running', 'a running container is not a ready database');
    t.equal((await client.get('mongo.one', { mongoId: main.id })).body.applicationStatus, 'running');
    // The line is written when the wait begins, which can be a moment after the task runs.
    const waiting = new RegExp(`Waiting until ${appName} accepts connections`);
    const log = await waitFor(`the deployment log to say it waits for ${appName}`, async () => {
      const text = (await client.get('deployment.readLogs', { deploymentId: main.deploymentId })).body as string;
      return waiting.test(text) && text;
    });
    t.pass('the deployment log says it waits until the database accepts connections');
    t.notMatch(log, 'Spec_pw-1', 'the password never reaches the log');

    const killed = await client.post('deployment.killProcess', { deploymentId: main.deploymentId });
    t.equal(killed.status, 200);
    t.equal((await deploymentFinished(client, main.deploymentId, { timeout: 30_000 })).state, 'cancelled');
    for (const [name, id] of [
      [appName, main.id],
      [detachedName, detached.id],
    ]) {
      const removed = await client.post('mongo.remove', { mongoId: id });
      t.equal(removed.status, 200, `remove ${name}, its deployment still running or not`);
      t.equal(await engineGone(docker.getService(name!).inspect()), 'gone', `${name}: no service left`);
      await waitFor(`${name}'s volume gone`, () =>
        docker
          .getVolume(dataVolumeOf('mongo', id!))
          .inspect()
          .then(
            () => false,
            (e: { statusCode?: number }) => e.statusCode === 404 || Promise.reject(e),
          ),
      );
      t.pass(`${name}: no data volume left`);
    }
  });

  t.test('a deploy of an image this host cannot get fails at once with a clear message', async t => {
    // mongo:15 is the peer's default; no such tag exists, and no registry is reachable here anyway.
    const created = await client.post('mongo.create', { name: 'unpullable', environmentId: environment.environmentId, databaseUser: 'u', databasePassword: 'Pw_1' });
    t.equal(created.body.dockerImage, 'mongo:15');
    const appName = created.body.appName as string;
    t.teardown(() => removeServiceAndVolume(appName));
    const started = Date.now();
    const queued = await client.post('mongo.deploy', { mongoId: created.body.mongoId });
    t.equal(queued.status, 200);
    const done = await deploymentFinished(client, deploymentIdOf(queued), { timeout: 30_000 });
    t.ok(Date.now() - started < 30_000, 'no hang waiting for an image');
    t.equal(done.status, 'error');
    t.match(done.errorMessage, /Could not pull mongo:15 .*no copy of it/);
    const one = await client.get('mongo.one', { mongoId: created.body.mongoId });
    t.equal(one.body.applicationStatus, 'error', 'the database shows the failure');
    t.equal(await engineGone(docker.getService(appName).inspect()), 'gone', 'no service was created');
    const log = (await client.get('deployment.readLogs', { deploymentId: deploymentIdOf(queued) })).body as string;
    t.match(log, /Could not pull mongo:15/, 'the reason is in the deployment log');
    const logs = await client.get('mongo.readLogs', { mongoId: created.body.mongoId });
    t.equal(logs.status, 400, 'no service, no logs');
  });
});
