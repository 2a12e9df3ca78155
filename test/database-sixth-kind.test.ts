// Issue 4: a third party adds a database kind of its own without touching core or the six built-in
// kinds. examples/database-valkey (a driver and its provider descriptor, against @berth/core alone)
// is loaded the way an operator loads it (one config line: providers.database.valkey.resolve, its
// path) and runs on the real engine:
// create → saveExternalPort → deploy → set/get with node-redis → changePassword → remove.
import path from 'node:path';
import t from 'tap';
import Docker from 'dockerode';
import { createClient } from 'redis';
import { startTestServer, signUpAdmin, otherOrganization, deploymentFinished, waitFor, freePort, removeServiceAndVolume, engineGone, deploymentIdOf } from '@berth/core/testing';
import { ensureValkeyTestImage } from '../examples/database-valkey/test/valkey-image.ts';
import { repoRoot } from './helpers.ts';
import { dataVolumeOf } from '@berth/plugin-workloads';

t.setTimeout(600_000);
const valkeyPlugin = path.join(repoRoot, 'examples/database-valkey');
const docker = new Docker();

/** A node-redis client on the URL Berth hands out (its host replaced: the test reaches the port on loopback). */
async function connect(url: string) {
  const target = new URL(url);
  target.hostname = '127.0.0.1';
  const c = createClient({ url: target.href, socket: { connectTimeout: 3000, reconnectStrategy: false } });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

const withPassword = (url: string, password: string) => {
  const u = new URL(url);
  u.password = encodeURIComponent(password);
  return u.href;
};

t.test('a sixth database kind from a third party', async t => {
  const image = await ensureValkeyTestImage(docker);
  const server = await startTestServer({ providers: { database: { valkey: { resolve: valkeyPlugin } } }, deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);

  t.test('is loaded from its path as a provider, beside the built-in kinds', async t => {
    const { providers } = server.kernel.container.cradle;
    t.ok(providers.has('database', 'valkey'), 'database.valkey is enabled');
    t.equal(server.kernel.container.resolve('database.valkey' as never), providers.get('database', 'valkey'), 'registered in the container as database.valkey');
    t.equal(providers.get('database', 'valkey').label, 'Valkey');
    t.ok(providers.has('database', 'redis'), 'the built-in kinds are still there');
    t.notOk(
      server.kernel.plugins.some(p => p.name === 'valkey'),
      'no plugin of its own: enabling the provider is all',
    );
    const procedures = server.kernel.container.cradle.registry
      .all()
      .filter(p => p.router === 'valkey')
      .map(p => p.name)
      .sort();
    const redisProcedures = server.kernel.container.cradle.registry
      .all()
      .filter(p => p.router === 'redis')
      .map(p => p.name)
      .sort();
    t.same(procedures, redisProcedures, 'every operation a built-in kind has');
    t.ok(procedures.includes('create'));
  });

  t.test('is in the OpenAPI document', async t => {
    const doc = (await client.get('settings.getOpenApiDocument')).body;
    const create = doc.paths['/valkey.create']?.post;
    t.equal(create?.operationId, 'valkey-create');
    t.same(create?.tags, ['valkey']);
    const body = create?.requestBody?.content?.['application/json']?.schema;
    t.ok(body?.properties?.databasePassword, 'create takes the password');
    t.notOk(body?.properties?.databaseName, 'and no database name: the driver has none');
    t.ok(doc.paths['/valkey.one']?.get?.responses?.['200'], 'one answers a documented record');
    t.ok(doc.paths['/valkey.changePassword']?.post, 'changePassword is there');
  });

  const {
    body: { project, environment },
  } = await client.post('project.create', { name: 'Sixth kind' });

  t.test('refuses bad input, naming the field', async t => {
    const missing = await client.post('valkey.create', { name: 'x', environmentId: environment.environmentId });
    t.equal(missing.status, 400);
    t.equal(missing.body.code, 'BAD_REQUEST');
    t.ok(
      missing.body.issues.some((i: { path: string[] }) => i.path.includes('databasePassword')),
      JSON.stringify(missing.body.issues),
    );
    const noName = await client.post('valkey.create', { name: '', environmentId: environment.environmentId, databasePassword: 'x' });
    t.equal(noName.status, 400);
    t.ok(
      noName.body.issues.some((i: { path: string[] }) => i.path.includes('name')),
      JSON.stringify(noName.body.issues),
    );
    const badAppName = await client.post('valkey.create', { name: 'x', appName: 'Bad Name;rm', environmentId: environment.environmentId, databasePassword: 'x' });
    t.equal(badAppName.status, 400);
    t.ok(
      badAppName.body.issues.some((i: { path: string[] }) => i.path.includes('appName')),
      JSON.stringify(badAppName.body.issues),
    );
    t.equal((await client.post('valkey.create', { name: 'x', environmentId: 'nope', databasePassword: 'x' })).status, 404, 'an unknown environment');
  });

  t.test('older variant: projectId places it in the default environment with the older default image', async t => {
    const created = await client.post('valkey.create', { name: 'legacy', projectId: project.projectId, databasePassword: 'legacy-pw' });
    t.equal(created.status, 200, JSON.stringify(created.body));
    t.equal(created.body.dockerImage, 'valkey/valkey:8');
    t.equal(created.body.environmentId, environment.environmentId);
    t.match(created.body.appName, /^valkey-legacy-[0-9a-f]{6}$/);
    t.equal((await client.post('valkey.remove', { valkeyId: created.body.valkeyId })).status, 200, 'removed without ever running');
  });

  t.test('gets mounts, ports, deployments by type and its place in project.one, with no line of core or of another plugin naming it', async t => {
    const {
      body: { project, environment },
    } = await client.post('project.create', { name: 'Sixth kind in the registry' });
    const created = await client.post('valkey.create', { name: 'kinds', environmentId: environment.environmentId, dockerImage: 'berth-test/none:0', databasePassword: 'pw-kinds-1' });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const valkeyId = created.body.valkeyId as string;
    t.teardown(() => client.post('valkey.remove', { valkeyId }));

    const mount = await client.post('mounts.create', { serviceType: 'valkey', serviceId: valkeyId, type: 'volume', volumeName: 'valkey-extra', mountPath: '/extra' });
    t.equal(mount.status, 200, JSON.stringify(mount.body));
    t.match(mount.body, { serviceType: 'valkey', valkeyId, applicationId: null, redisId: null }, 'a mount of the sixth kind, under its own <kind>Id field');
    const listed = await client.get('mounts.listByServiceId', { serviceType: 'valkey', serviceId: valkeyId });
    t.same(
      listed.body.map((m: { mountId: string }) => m.mountId),
      [mount.body.mountId],
    );
    t.same(
      (await client.get('valkey.one', { valkeyId })).body.mounts.map((m: { mountId: string }) => m.mountId),
      [mount.body.mountId],
      'and valkey.one lists it',
    );

    const port = await freePort();
    t.equal((await client.post('valkey.saveExternalPort', { valkeyId, externalPort: port })).status, 200);
    const app = await client.post('application.create', { name: 'port-taker', environmentId: environment.environmentId });
    const clash = await client.post('port.create', { applicationId: app.body.applicationId, publishedPort: port, targetPort: 80 });
    t.equal(clash.status, 409, 'its external port is held on the host: an application cannot publish it');

    const queued = await client.post('valkey.deploy', { valkeyId });
    t.equal(queued.status, 200);
    const byType = await client.get('deployment.allByType', { type: 'valkey', id: valkeyId });
    t.equal(byType.status, 200, JSON.stringify(byType.body));
    t.match(byType.body, [{ deploymentId: deploymentIdOf(queued), targetType: 'valkey', valkeyId, applicationId: null }], 'deployments by type, with its <kind>Id field');

    const one = await client.get('project.one', { projectId: project.projectId });
    t.same(
      one.body.environments[0].valkey.map((v: { valkeyId: string }) => v.valkeyId),
      [valkeyId],
      'project.one lists it under its own key',
    );
    const doc = (await client.get('settings.getOpenApiDocument')).body;
    t.ok(doc.paths['/mounts.create'].post.requestBody.content['application/json'].schema.properties.serviceType.enum.includes('valkey'), "the document's mount owners include it");

    const removed = await client.post('project.remove', { projectId: project.projectId });
    t.equal(removed.status, 200);
    t.equal((await client.get('valkey.one', { valkeyId })).status, 404, 'removing the project removed it through its kind');
    t.equal((await client.get('mounts.one', { mountId: mount.body.mountId })).status, 404, 'with its mounts');
  });

  t.test('create → saveExternalPort → deploy → set/get → changePassword → remove, on the real engine', async t => {
    // A project of its own: the searches and listings below expect exactly what this test made.
    const {
      body: { project, environment },
    } = await client.post('project.create', { name: 'Sixth kind on the engine' });
    const password = 'Vk-pass_1#@/% (x)';
    const created = await client.post('valkey.create', { name: 'cache', environmentId: environment.environmentId, dockerImage: image, databasePassword: password });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const valkeyId = created.body.valkeyId as string;
    const appName = created.body.appName as string;
    t.match(appName, /^valkey-cache-[0-9a-f]{6}$/, 'the app name comes from the kind');
    t.equal(created.body.dockerImage, image);
    t.equal(created.body.applicationStatus, 'idle');
    t.teardown(() => removeServiceAndVolume(appName));
    const taken = await client.post('valkey.create', { name: 'again', appName, environmentId: environment.environmentId, databasePassword: 'x' });
    t.equal(taken.status, 409, 'the app name is taken');
    t.equal(taken.body.code, 'CONFLICT');

    const port = await freePort();
    t.equal((await client.post('valkey.saveExternalPort', { valkeyId, externalPort: 70000 })).status, 400, 'a port out of range');
    t.equal((await client.post('valkey.saveExternalPort', { valkeyId, externalPort: port })).body.externalPort, port);

    const other = await otherOrganization(server, userId);
    t.equal((await other.client.get('valkey.one', { valkeyId })).status, 404, 'another organization does not see it');
    t.equal((await other.client.post('valkey.deploy', { valkeyId })).status, 404, 'nor deploys it');
    t.equal((await other.client.post('valkey.remove', { valkeyId })).status, 404, 'nor removes it');
    t.same((await other.client.get('valkey.search', {})).body, { items: [], total: 0 });

    const queued = await client.post('valkey.deploy', { valkeyId });
    t.equal(queued.status, 200, JSON.stringify(queued.body));
    t.match(queued.body, { valkeyId, appName: String, environment: { environmentId: String } }, 'deploy answers the database, as the peer does');
    const deployed = await deploymentFinished(client, deploymentIdOf(queued));
    t.equal(deployed.status, 'done', deployed.errorMessage ?? '');
    const log = (await client.get('deployment.readLogs', { deploymentId: deployed.deploymentId })).body as string;
    t.match(log, /Valkey/, 'the log names the kind by its label');
    t.notOk(log.includes(password), 'the password never reaches the log');

    const spec = (await docker.getService(appName).inspect()).Spec;
    t.equal(spec.Labels?.['berth.kind'], 'valkey');
    t.same(spec.TaskTemplate.ContainerSpec.Args?.slice(0, 5), ['valkey-server', '--dir', '/data', '--appendonly', 'yes'], "the driver's start command");
    t.match(spec.TaskTemplate.ContainerSpec.Image, image);
    t.same(
      spec.TaskTemplate.ContainerSpec.Mounts?.map((m: { Source?: string; Target?: string }) => [m.Source, m.Target]),
      [[dataVolumeOf('valkey', valkeyId), '/data']],
      "the data volume, named after the record, on the driver's data path",
    );

    const found = await client.get('valkey.search', { environmentId: environment.environmentId });
    t.same(
      found.body.items.map((i: { valkeyId: string }) => i.valkeyId),
      [valkeyId],
      'found through its namespace by environment',
    );
    const env = await client.get('environment.one', { environmentId: environment.environmentId });
    t.equal(env.status, 200, 'the environment still answers with a sixth kind in it');
    t.same(env.body.redis, [], 'and lists it under no built-in kind');
    t.same(
      env.body.valkey.map((i: { valkeyId: string }) => i.valkeyId),
      [valkeyId],
      'but under its own key',
    );
    t.notOk('databasePassword' in env.body.valkey[0], 'without its password');

    const one = await client.get('valkey.one', { valkeyId });
    t.equal(one.status, 200);
    t.equal(one.body.applicationStatus, 'done');
    t.equal(one.body.databasePassword, password);
    t.equal(one.body.internalConnectionUrl, `redis://default:${encodeURIComponent(password)}@${appName}:6379`);
    t.equal(one.body.externalConnectionUrl, `redis://default:${encodeURIComponent(password)}@localhost:${port}`);
    t.match(one.body, { environment: { environmentId: environment.environmentId, project: { projectId: project.projectId } } });

    // Host-mode publishing follows the task start closely: the port may open a moment after the deployment is done.
    let c = await waitFor(`valkey accepting connections on ${port}`, () => connect(one.body.externalConnectionUrl));
    t.equal(await c.set('berth:probe', 'kept'), 'OK');
    t.equal(await c.get('berth:probe'), 'kept', 'written and read with node-redis through the URL Berth hands out');
    t.match(await c.info('server'), /redis_version/, 'a server speaking the Redis protocol');
    await c.quit();
    await t.rejects(connect(withPassword(one.body.externalConnectionUrl, 'wrong')), { message: /^WRONGPASS/ }, 'a wrong password is refused by AUTH');

    const root = await client.post('valkey.changePassword', { valkeyId, password: 'x', type: 'root' });
    t.equal(root.status, 400, 'no root password: the driver says so');
    t.ok(
      root.body.issues.some((i: { path: string[] }) => i.path.includes('type')),
      JSON.stringify(root.body),
    );
    t.equal((await client.post('valkey.changePassword', { valkeyId, password: '' })).status, 400, 'an empty new password');

    const newPassword = 'New-pass_2 "z"$;';
    const changed = await client.post('valkey.changePassword', { valkeyId, password: newPassword });
    t.equal(changed.status, 200, JSON.stringify(changed.body));
    await t.rejects(connect(one.body.externalConnectionUrl), { message: /^WRONGPASS/ }, 'the old password is refused by AUTH');
    const after = await client.get('valkey.one', { valkeyId });
    t.equal(after.body.databasePassword, newPassword, 'the record has the new password');
    c = await connect(after.body.externalConnectionUrl);
    t.equal(await c.get('berth:probe'), 'kept', 'the new password works, the data is there');
    await c.quit();

    const removed = await client.post('valkey.remove', { valkeyId });
    t.equal(removed.status, 200);
    t.equal(removed.body.valkeyId, valkeyId);
    t.equal(await engineGone(docker.getService(appName).inspect()), 'gone', 'no service');
    t.equal(await engineGone(docker.getVolume(dataVolumeOf('valkey', valkeyId)).inspect()), 'gone', 'no volume');
    t.equal((await client.get('valkey.one', { valkeyId })).status, 404);
    t.equal((await client.get('deployment.one', { deploymentId: deployed.deploymentId })).status, 404, 'its deployment records are gone too');
  });
});
