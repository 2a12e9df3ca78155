// Volume backups need no helper image: on an engine of the test's own that holds nothing but the
// workload's image (no berth-test/busybox, nothing pulled or built), a redis data volume is backed
// up and restored with backupHelperImage unset — the copy goes through the engine's archive API on
// a container of the workload's image that is created and never started.
import t from 'tap';
import { startTestServer, signUpAdmin, deploymentFinished, runFinished, Client, TEST_REDIS_IMAGE } from '@berth/core/testing';
import { runContainerCommand, startTestEngine } from '@berth/plugin-workloads/testing';

t.setTimeout(600_000);

t.test("a volume backed up and restored on an engine that has only the workload's image", async t => {
  const engine = await startTestEngine(t, { images: [TEST_REDIS_IMAGE], swarm: true });
  t.same(await engine.images(), [TEST_REDIS_IMAGE], "the engine holds the workload's image and nothing else");
  // The kernel's engine client honours DOCKER_HOST: this process talks to the test's engine only.
  process.env.DOCKER_HOST = engine.host;
  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  t.equal(server.kernel.config.backupHelperImage, undefined, 'no helper image is configured, none by default');
  const { client, apiKey } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Fresh host' });
  const dest = (await client.post('destination.create', { name: 'disk', provider: 'local', bucket: 'volumes', endpoint: '', region: '', accessKey: '', secretAccessKey: '', additionalFlags: null }))
    .body;
  const created = await client.post('redis.create', { name: 'cache', environmentId: environment.environmentId, dockerImage: TEST_REDIS_IMAGE, databasePassword: 'Redis-pass_1' });
  const { redisId, appName } = created.body as { redisId: string; appName: string };
  t.equal((await runFinished(client, 'redis.deploy', { redisId })).status, 'done');
  const docker = engine.docker;
  const spec = (await docker.getService(appName).inspect()).Spec as { Mode: { Replicated: { Replicas: number } }; TaskTemplate: { ContainerSpec: { Mounts: { Source: string; Target: string }[] } } };
  const volumeName = spec.TaskTemplate.ContainerSpec.Mounts.find(m => m.Target === '/data')!.Source;
  const sh = async (script: string) => {
    const [container] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${appName}`], status: ['running'] } });
    const r = await runContainerCommand(docker, container!.Id, { cmd: ['sh', '-c', script] });
    if (r.exitCode !== 0) throw new Error(r.stderr);
    return r.stdout.toString('utf8').trim();
  };
  await sh(
    'mkdir -p /data/files/deep && echo "hello volume" > /data/files/a.txt && head -c 100000 /dev/urandom > /data/files/deep/blob.bin && chmod 640 /data/files/a.txt && ln -s a.txt /data/files/link',
  );
  const tree = () => sh('cd /data/files && find . -exec stat -c "%n %a %s %F" {} + | sort && find . -type f -exec sha256sum {} + | sort && readlink link');
  const original = await tree();

  const made = await client.post('volumeBackups.create', {
    name: 'files',
    volumeName,
    prefix: 'fresh',
    serviceType: 'redis',
    cronExpression: '0 3 * * *',
    destinationId: dest.destinationId,
    redisId,
    turnOff: true,
  });
  t.equal(made.status, 200, JSON.stringify(made.body));
  const ran = await client.post('volumeBackups.runManually', { volumeBackupId: made.body.volumeBackupId });
  t.equal(ran.body, true, JSON.stringify(ran.body));
  const [file] = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: `${appName}/fresh/` })).body as { Path: string; Size: number }[];
  t.ok(file && file.Size > 50_000, "the volume's file is in the destination");

  await sh('rm -rf /data/files/deep && echo changed > /data/files/a.txt && echo later > /data/files/after.txt');
  const queued = await client.post('volumeBackups.restore', { backupFileName: file!.Path, destinationId: dest.destinationId, volumeName, id: redisId, serviceType: 'redis' });
  t.equal(queued.status, 200, JSON.stringify(queued.body));
  const restored = await deploymentFinished(client, queued.body.deploymentId, { timeout: 120_000 }).catch(async e => {
    t.comment((await client.get('deployment.readLogs', { deploymentId: queued.body.deploymentId })).body);
    throw e;
  });
  t.equal(restored.status, 'done', restored.errorMessage ?? '');
  t.equal(await tree(), original, 'every file, mode and link is back, and what came after the backup is gone');
  t.equal(((await docker.getService(appName).inspect()).Spec as typeof spec).Mode.Replicated.Replicas, 1, 'the service runs its replica again');
  t.same(await engine.images(), [TEST_REDIS_IMAGE], "still nothing but the workload's image: no helper image was needed");
  const helpers = await docker.listContainers({ all: true, filters: { label: ['berth.volume-helper'] } });
  t.same(helpers, [], 'no helper container is left');

  // The optional override names the image instead; one that is not on the host is a failed run, never a pull.
  const overridden = await server.restart({ deploySettleSeconds: 0, backupHelperImage: 'berth-test/busybox:1' });
  const failed = await new Client(overridden.url, { apiKey }).post('volumeBackups.runManually', { volumeBackupId: made.body.volumeBackupId });
  t.equal(failed.status, 400);
  t.match(failed.body.message, /the helper image berth-test\/busybox:1 \(config backupHelperImage\) is not on this host; it is never pulled/);
  t.same(await engine.images(), [TEST_REDIS_IMAGE], 'nothing was pulled');
});
