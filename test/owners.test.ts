// Berth owns what it creates on a host (issue #11): a service or volume of a workload's name that
// is not Berth's for that very record is refused with 409 and never read, stopped, updated or
// removed; one organization never reaches another's data volume; and what Berth made before
// objects were labelled is adopted on upgrade, data kept.
import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import Docker from 'dockerode';
import pg from 'pg';
import { startTestServer, signUpAdmin, otherOrganization, waitFor, removeServiceAndVolume, TEST_BASE_IMAGE, TEST_REDIS_IMAGE, TEST_STATIC_IMAGE, Client, runFinished } from '@berth/core/testing';
import { runContainerCommand } from '@berth/plugin-workloads/testing';

t.setTimeout(600_000);
const docker = new Docker();
const NOT_OURS = /exists on this host and is not Berth's for this record/;
const unique = (what: string) => `berth-test-${what}-${randomBytes(4).toString('hex')}`;
/** A volume name users may choose (berth-* is the platform's). */
const volumeName = (what: string) => `own-test-${what}-${randomBytes(4).toString('hex')}`;
const volumeLabels = async (name: string) => ((await docker.getVolume(name).inspect()) as { Labels?: Record<string, string> | null }).Labels ?? {};
const MOUNT_REFUSED = (name: string) => new RegExp(`a volume named ${name} exists on this host and is not a mount volume of this organization`);

interface EngineService {
  ID: string;
  Version: { Index: number };
  Spec: { Name: string; Labels?: Record<string, string>; TaskTemplate: object };
}
const inspect = (name: string) => docker.getService(name).inspect() as Promise<EngineService>;
const runningTasks = async (name: string) =>
  ((await docker.listTasks({ filters: { service: [name], 'desired-state': ['running'] } })) as { Status?: { State?: string } }[]).filter(task => task.Status?.State === 'running').length;

/** A service made directly on the engine, not by Berth: no labels of Berth's. */
async function foreignService(t: Test, name: string): Promise<EngineService> {
  await docker.createService({
    Name: name,
    TaskTemplate: { ContainerSpec: { Image: TEST_BASE_IMAGE, Args: ['sleep', '3600'], Init: true, StopGracePeriod: 1_000_000_000 } },
    Mode: { Replicated: { Replicas: 1 } },
  });
  t.teardown(() =>
    docker
      .getService(name)
      .remove()
      .catch(() => undefined),
  );
  await waitFor(`${name} running`, async () => (await runningTasks(name)) === 1, { timeout: 60_000, interval: 250 });
  return inspect(name);
}

t.test('engine objects Berth does not own for the record', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);
  const other = await otherOrganization(server, userId);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Owners' });
  const theirs = (await other.client.post('project.create', { name: 'Theirs' })).body.environment;
  const sql = new pg.Client(server.database);
  await sql.connect();
  t.teardown(() => sql.end());

  t.test('an appName taken on the host by a foreign service is refused at create and update', async t => {
    const name = unique('taken');
    await foreignService(t, name);
    const app = await client.post('application.create', { name: 'web', appName: name, environmentId: environment.environmentId });
    t.equal(app.status, 409);
    t.match(app.body.message, NOT_OURS);
    const db = await client.post('redis.create', { name: 'cache', appName: name, environmentId: environment.environmentId, databasePassword: 'Owner-pass_1' });
    t.equal(db.status, 409);
    t.match(db.body.message, NOT_OURS);
    const free = await client.post('redis.create', { name: 'cache', environmentId: environment.environmentId, databasePassword: 'Owner-pass_1' });
    t.equal(free.status, 200);
    const renamed = await client.post('redis.update', { redisId: free.body.redisId, appName: name });
    t.equal(renamed.status, 409);
    t.match(renamed.body.message, NOT_OURS);
  });

  t.test("a foreign service of the record's appName is never read, stopped, updated or removed", async t => {
    const created = await client.post('redis.create', { name: 'late', environmentId: environment.environmentId, dockerImage: TEST_REDIS_IMAGE, databasePassword: 'Owner-pass_1' });
    t.equal(created.status, 200);
    const { redisId, appName } = created.body as { redisId: string; appName: string };
    // The name is taken on the host after the record was made (or by someone Berth cannot see).
    const before = await foreignService(t, appName);

    const deployed = await runFinished(client, 'redis.deploy', { redisId });
    t.equal(deployed.status, 'error');
    t.match(deployed.errorMessage, NOT_OURS);
    for (const op of ['redis.stop', 'redis.start', 'redis.reload']) {
      const done = await runFinished(client, op, { redisId, appName });
      t.equal(done.status, 'error', op);
      t.match(done.errorMessage, NOT_OURS, op);
    }
    const logs = await client.get('redis.readLogs', { redisId, tail: 10 });
    t.equal(logs.status, 409, 'its logs are not read');
    t.match(logs.body.message, NOT_OURS);
    const removed = await client.post('redis.remove', { redisId });
    t.equal(removed.status, 409, 'remove refuses rather than take the foreign service with it');
    t.match(removed.body.message, NOT_OURS);

    const after = await inspect(appName);
    t.equal(after.ID, before.ID, 'the same service');
    t.equal(after.Version.Index, before.Version.Index, 'never updated');
    t.same(after.Spec.Labels ?? {}, {}, 'never relabelled');
    t.equal(await runningTasks(appName), 1, 'still running');
  });

  t.test("one organization never reaches another's data volume", async t => {
    const mine = await client.post('redis.create', { name: 'mine', environmentId: environment.environmentId, dockerImage: TEST_REDIS_IMAGE, databasePassword: 'Owner-pass_1' });
    const { redisId, appName } = mine.body as { redisId: string; appName: string };
    t.teardown(() => removeServiceAndVolume(appName));
    t.equal((await runFinished(client, 'redis.deploy', { redisId })).status, 'done');
    const [{ data_volume: volume }] = (await sql.query('select data_volume from db_redis where id = $1', [redisId])).rows;
    const labels = ((await docker.getVolume(volume).inspect()) as { Labels?: Record<string, string> }).Labels;
    t.match(labels, { 'berth.kind': 'redis', 'berth.id': redisId }, 'the data volume is labelled with its record');
    t.equal(typeof labels?.['berth.organization'], 'string', 'and its organization');
    t.match((await inspect(appName)).Spec.Labels, { 'berth.id': redisId, 'berth.organization': labels?.['berth.organization'] }, 'so is the service');

    // A mount of the other organization cannot name it: berth-* volumes are the platform's.
    const app = (await other.client.post('application.create', { name: 'thief', environmentId: theirs.environmentId })).body;
    const mount = await other.client.post('mounts.create', { serviceId: app.applicationId, type: 'volume', volumeName: volume, mountPath: '/steal' });
    t.equal(mount.status >= 400, true, 'a mount naming the volume is refused');

    // A database of the other organization whose volume name collides (as an older record's
    // `<appName>-data` could) is refused: neither used nor removed.
    const thief = await other.client.post('redis.create', { name: 'thief', environmentId: theirs.environmentId, dockerImage: TEST_REDIS_IMAGE, databasePassword: 'Owner-pass_1' });
    t.teardown(() => removeServiceAndVolume(thief.body.appName));
    await sql.query('update db_redis set data_volume = $1 where id = $2', [volume, thief.body.redisId]);
    const stolen = await runFinished(other.client, 'redis.deploy', { redisId: thief.body.redisId });
    t.equal(stolen.status, 'error');
    t.match(stolen.errorMessage, /a volume named .* is not Berth's for this record/);
    const removed = await other.client.post('redis.remove', { redisId: thief.body.redisId });
    t.equal(removed.status, 409, 'its removal does not take the volume');
    t.match(((await docker.getVolume(volume).inspect()) as { Labels?: Record<string, string> }).Labels, { 'berth.id': redisId }, "the volume is still there, still its owner's");
  });
});

t.test('named volumes of mounts: made by Berth, labelled, shared within one organization only', async t => {
  let server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client: firstClient, userId, apiKey } = await signUpAdmin(server);
  let client = firstClient;
  const other = await otherOrganization(server, userId);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Volumes' });
  const theirs = (await other.client.post('project.create', { name: 'Theirs' })).body.environment;
  const sql = new pg.Client(server.database);
  await sql.connect();

  // Services first, then the volumes they mounted (a volume in use cannot be removed).
  const services: string[] = [];
  const volumes: string[] = [];
  t.teardown(async () => {
    for (const name of services)
      await docker
        .getService(name)
        .remove()
        .catch(() => undefined);
    for (const name of volumes) {
      await waitFor(
        `volume ${name} removed`,
        () =>
          docker
            .getVolume(name)
            .remove()
            .then(
              () => true,
              (e: { statusCode?: number }) => e.statusCode === 404 || undefined,
            ),
        { timeout: 60_000, interval: 250 },
      );
    }
  });
  const staticApp = async (c: Client, environmentId: string, name: string) => {
    const app = (await c.post('application.create', { name, environmentId })).body as { applicationId: string; appName: string };
    services.push(app.appName);
    t.equal((await c.post('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_STATIC_IMAGE })).status, 200);
    return app;
  };
  const mount = (c: Client, applicationId: string, name: string, mountPath = '/shared') => c.post('mounts.create', { serviceId: applicationId, type: 'volume', volumeName: name, mountPath });

  const shared = volumeName('shared');
  volumes.push(shared);
  const first = await staticApp(client, environment.environmentId, 'first');
  t.equal((await mount(client, first.applicationId, shared)).status, 200, 'a volume that does not exist yet may be named');
  const deployed = await runFinished(client, 'application.deploy', { applicationId: first.applicationId });
  t.equal(deployed.status, 'done', deployed.errorMessage ?? '');
  const { organizationId } = (await client.get('application.one', { applicationId: first.applicationId })).body as { organizationId: string };
  t.same(
    await volumeLabels(shared),
    { 'berth.kind': 'application', 'berth.id': first.applicationId, 'berth.organization': organizationId, 'berth.mount-volume': 'true' },
    "Berth created it before the service, with the owner's labels and the mount-volume label",
  );

  const second = await staticApp(client, environment.environmentId, 'second');
  t.equal((await mount(client, second.applicationId, shared)).status, 200, 'another workload of the organization may mount it');
  const alsoDeployed = await runFinished(client, 'application.deploy', { applicationId: second.applicationId });
  t.equal(alsoDeployed.status, 'done', alsoDeployed.errorMessage ?? '');

  const thief = await staticApp(other.client, theirs.environmentId, 'thief');
  const stolen = await mount(other.client, thief.applicationId, shared);
  t.equal(stolen.status, 409, 'another organization cannot mount it by naming it');
  t.match(stolen.body.message, shared, 'the refusal names the volume');
  // Named before the volume existed (or while the engine could not be asked): the deploy refuses it.
  const later = volumeName('later');
  const made = await mount(other.client, thief.applicationId, later);
  t.equal(made.status, 200);
  await sql.query('update mounts set volume_name = $1 where mount_id = $2', [shared, made.body.mountId]);
  const refused = await runFinished(other.client, 'application.deploy', { applicationId: thief.applicationId });
  t.equal(refused.status, 'error');
  t.match(refused.errorMessage, MOUNT_REFUSED(shared), 'and so does every deploy');
  t.equal((await docker.listServices({ filters: { name: [thief.appName] } })).length, 0, 'no service was made for it');

  const stray = volumeName('stray');
  volumes.push(stray);
  await docker.createVolume({ Name: stray });
  const strayMount = await mount(client, first.applicationId, stray, '/stray');
  t.equal(strayMount.status, 409, 'a stray unlabelled volume is refused');
  t.match(strayMount.body.message, MOUNT_REFUSED(stray));
  const firstMounts = (await client.get('mounts.listByServiceId', { serviceId: second.applicationId, serviceType: 'application' })).body as { mountId: string }[];
  const renamed = await client.post('mounts.update', { mountId: firstMounts[0]!.mountId, volumeName: stray });
  t.equal(renamed.status, 409, 'and so is changing a mount to it');
  t.match(renamed.body.message, MOUNT_REFUSED(stray));

  // A mount that existed before this change, its volume made by Swarm without labels: the
  // schema is put back as it was, and the restart's migration adopts it; it still deploys, the
  // volume left as it is.
  const legacy = volumeName('legacy');
  volumes.push(legacy);
  const old = await staticApp(client, environment.environmentId, 'old');
  const oldMount = await mount(client, old.applicationId, legacy, '/legacy');
  t.equal(oldMount.status, 200);
  await docker.createVolume({ Name: legacy });
  await sql.query('alter table mounts drop column volume_adopted');
  await sql.query('delete from berth_migrations where name = $1', ['Migration20261202000000_mounts_volume_adopted']);
  await sql.end(); // the embedded database (BERTH_TEST_DB=default) restarts with the server
  server = await server.restart();
  client = new Client(server.url, { apiKey });
  const after = new pg.Client(server.database);
  await after.connect();
  const [{ volume_adopted: marked }] = (await after.query('select volume_adopted from mounts where mount_id = $1', [oldMount.body.mountId])).rows;
  await after.end();
  t.equal(marked, true, "the upgrade's migration marks the existing volume mount adopted");
  const adopted = await runFinished(client, 'application.deploy', { applicationId: old.applicationId });
  t.equal(adopted.status, 'done', adopted.errorMessage ?? '');
  t.same(await volumeLabels(legacy), {}, 'the adopted volume is mounted as it was');
  t.notOk('volumeAdopted' in (await client.get('mounts.one', { mountId: oldMount.body.mountId })).body, "adoption is not part of the API's answer");
});

t.test('upgrading adopts what Berth made before labels: deploy again keeps the data', async t => {
  let server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client: first, apiKey } = await signUpAdmin(server);
  let client = first;
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Old' });
  const created = await client.post('redis.create', { name: 'old', environmentId: environment.environmentId, dockerImage: TEST_REDIS_IMAGE, databasePassword: 'Owner-pass_1' });
  const { redisId, appName } = created.body as { redisId: string; appName: string };
  t.teardown(() => removeServiceAndVolume(appName));

  // The old way: the record's volume is `<appName>-data` and has no labels (Swarm made it).
  const legacy = `${appName}-data`;
  await docker.createVolume({ Name: legacy });
  const sql = new pg.Client(server.database);
  await sql.connect();
  await sql.query('update db_redis set data_volume = $1 where id = $2', [legacy, redisId]);
  await sql.end();
  t.equal((await runFinished(client, 'redis.deploy', { redisId })).status, 'done', "an adopted volume without labels is the record's");
  const container = async () => (await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${appName}`] } }))[0]!.Id;
  const probe = await runContainerCommand(docker, await container(), { cmd: ['sh', '-c', 'echo kept > /data/probe'] });
  t.equal(probe.exitCode, 0);

  // The old service had no organization label: take it off as the older Berth made it.
  const old = await inspect(appName);
  const { 'berth.organization': _organization, ...oldLabels } = old.Spec.Labels ?? {};
  await (docker.getService(old.ID) as unknown as { update(o: object): Promise<unknown> }).update({ _query: { version: old.Version.Index }, _body: { ...old.Spec, Labels: oldLabels } });
  t.notOk((await inspect(appName)).Spec.Labels?.['berth.organization'], 'an unlabelled service, as before');

  server = await server.restart();
  client = new Client(server.url, { apiKey });
  // The first use of the engine after the start (reading the logs changes nothing) adopts it.
  t.equal((await client.get('redis.readLogs', { redisId, tail: 1 })).status, 200);
  const adopted = await waitFor('the service relabelled', async () => {
    const s = await inspect(appName);
    return s.Spec.Labels?.['berth.organization'] ? s : undefined;
  });
  const { organizationId } = (await client.get('redis.one', { redisId })).body as { organizationId: string };
  t.equal(adopted.Spec.Labels?.['berth.organization'], organizationId, 'relabelled with its organization once the engine is used');
  t.same(adopted.Spec.TaskTemplate, (await inspect(appName)).Spec.TaskTemplate, 'the spec is kept');

  const again = await runFinished(client, 'redis.deploy', { redisId });
  t.equal(again.status, 'done', again.errorMessage ?? '');
  const read = await runContainerCommand(docker, await container(), { cmd: ['cat', '/data/probe'] });
  t.equal(read.stdout.toString('utf8').trim(), 'kept', 'the data is still there');
  t.same(((await docker.getVolume(legacy).inspect()) as { Labels?: Record<string, string> | null }).Labels ?? {}, {}, 'the same, unrenamed volume');
});
