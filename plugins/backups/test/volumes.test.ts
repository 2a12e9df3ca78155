// Volume backups on the real engine: files in a database's data volume → backup with the
// service stopped during the copy (and back to its replicas after) → change and delete →
// volumeBackups.restore (which stops what uses the volume instead of failing "in use") → the
// files are back exactly, what came after the backup is gone, and the service runs again.
import t from 'tap';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, deploymentFinished, runFinished, removeServiceAndVolume, otherOrganization, TEST_REDIS_IMAGE } from '@berth/core/testing';
import { runContainerCommand } from '@berth/plugin-workloads/testing';

t.setTimeout(600_000);
const docker = new Docker();

t.test('a volume round trip, its service stopped during the copy and restored to its replicas', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);
  const events: { volumeBackupId: string; status: string; file: string | null }[] = [];
  server.kernel.container.cradle.events.on('volumeBackup', e => void events.push(e));
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Volumes' });
  const dest = (await client.post('destination.create', { name: 'disk', provider: 'local', bucket: 'volumes', endpoint: '', region: '', accessKey: '', secretAccessKey: '', additionalFlags: null }))
    .body;
  const created = await client.post('redis.create', { name: 'cache', environmentId: environment.environmentId, dockerImage: TEST_REDIS_IMAGE, databasePassword: 'Redis-pass_1' });
  const { redisId, appName } = created.body as { redisId: string; appName: string };
  t.teardown(() => removeServiceAndVolume(appName));
  t.equal((await runFinished(client, 'redis.deploy', { redisId })).status, 'done');
  const service = docker.getService(appName);
  const spec = (await service.inspect()).Spec as { Mode: { Replicated: { Replicas: number } }; TaskTemplate: { ContainerSpec: { Mounts: { Type: string; Source: string; Target: string }[] } } };
  const volumeName = spec.TaskTemplate.ContainerSpec.Mounts.find(m => m.Target === '/data')!.Source;
  const sh = async (script: string) => {
    const [container] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${appName}`], status: ['running'] } });
    const r = await runContainerCommand(docker, container!.Id, { cmd: ['sh', '-c', script] });
    if (r.exitCode !== 0) throw new Error(r.stderr);
    return r.stdout.toString('utf8').trim();
  };
  await sh(
    'mkdir -p /data/files/deep/er && echo "hello volume" > /data/files/a.txt && head -c 200000 /dev/urandom > /data/files/deep/blob.bin && echo secret > /data/files/deep/er/.hidden && chmod 640 /data/files/a.txt && ln -s a.txt /data/files/link',
  );
  const tree = () => sh('cd /data/files && find . -exec stat -c "%n %a %s %F" {} + | sort && find . -type f -exec sha256sum {} + | sort && readlink link');
  const original = await tree();

  const bad = await client.post('volumeBackups.create', { name: 'x', volumeName: '../etc', prefix: 'x', cronExpression: '0 3 * * *', destinationId: dest.destinationId, redisId });
  t.match(bad.body, { code: 'BAD_REQUEST', issues: [{ path: ['volumeName'] }] }, 'a volume name is a strict pattern');
  const badCron = await client.post('volumeBackups.create', { name: 'x', volumeName, prefix: 'x', cronExpression: 'daily', destinationId: dest.destinationId, redisId });
  t.match(badCron.body, { code: 'BAD_REQUEST', issues: [{ path: ['cronExpression'] }] });
  const made = await client.post('volumeBackups.create', {
    name: 'cache files',
    volumeName,
    prefix: 'daily',
    serviceType: 'redis',
    cronExpression: '0 3 * * *',
    destinationId: dest.destinationId,
    redisId,
    turnOff: true,
    keepLatestCount: 2,
  });
  t.equal(made.status, 200, JSON.stringify(made.body));
  t.match(made.body, { volumeName, serviceType: 'redis', redisId, applicationId: null, composeId: null, turnOff: true, enabled: null, lastRunAt: null });
  const volumeBackupId = made.body.volumeBackupId as string;
  t.match((await client.get('volumeBackups.list', { id: redisId, volumeBackupType: 'redis' })).body, [{ volumeBackupId }]);
  const one = (await client.get('volumeBackups.one', { volumeBackupId })).body;
  t.match(
    one,
    { destination: { destinationId: dest.destinationId }, application: null, redis: { redisId, appName: String, environment: { environmentId: String, project: { projectId: String } } } },
    "one joins its workload's record with its environment and project, as the peer",
  );
  t.notOk('accessKey' in one.destination, "the destination's keys are not answered");
  const other = await otherOrganization(server, userId);
  t.equal((await other.client.get('volumeBackups.one', { volumeBackupId })).status, 404, 'another organization sees no volume backup');
  t.equal((await other.client.post('volumeBackups.runManually', { volumeBackupId })).status, 404);

  const ran = await client.post('volumeBackups.runManually', { volumeBackupId });
  t.equal(ran.status, 200, JSON.stringify(ran.body));
  t.equal(ran.body, true);
  const runs = (await client.get('deployment.allByType', { id: volumeBackupId, type: 'volumeBackup' })).body as { deploymentId: string; status: string; volumeBackupId: string }[];
  t.match(runs, [{ status: 'done', volumeBackupId }], "the run is a deployment of the volume backup, as the peer's");
  const log = (await client.get('deployment.readLogs', { deploymentId: runs[0]!.deploymentId })).body as string;
  t.match(log, /Stopping service .* while its volume is copied/, 'turnOff stopped the service for the copy');
  t.match(log, /Starting service .* again \(1 replica\)/);
  t.equal(((await service.inspect()).Spec as typeof spec).Mode.Replicated.Replicas, 1, 'and gave it back its replica');
  t.match(events, [{ volumeBackupId, status: 'success', file: new RegExp(`^${appName}/daily/${volumeName}-.*\\.tar\\.gz$`) }], 'a volumeBackup success event named the file');
  const [file] = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: `${appName}/daily/` })).body as { Path: string; Size: number }[];
  t.ok(file && file.Size > 1000, 'the file is in the destination');

  await sh('rm -rf /data/files/deep && echo changed > /data/files/a.txt && echo later > /data/files/after-backup.txt');
  t.not(await tree(), original);
  const queued = await client.post('volumeBackups.restore', { backupFileName: file!.Path, destinationId: dest.destinationId, volumeName, id: redisId, serviceType: 'redis' });
  t.equal(queued.status, 200, JSON.stringify(queued.body));
  const restored = await deploymentFinished(client, queued.body.deploymentId, { timeout: 90_000 }).catch(async e => {
    t.comment((await client.get('deployment.readLogs', { deploymentId: queued.body.deploymentId })).body);
    throw e;
  });
  t.equal(restored.status, 'done', restored.errorMessage ?? '');
  t.equal(await tree(), original, 'every file, mode and link is back exactly, and what came after the backup is gone');
  t.equal(((await service.inspect()).Spec as typeof spec).Mode.Replicated.Replicas, 1, 'the service runs its replica again');
  const restoreLog = (await client.get('deployment.readLogs', { deploymentId: queued.body.deploymentId })).body as string;
  t.match(restoreLog, /Stopping service/, 'the restore stopped what used the volume instead of failing "in use"');

  await client.post('volumeBackups.runManually', { volumeBackupId });
  await client.post('volumeBackups.runManually', { volumeBackupId });
  const kept = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: `${appName}/daily/` })).body as { Path: string }[];
  t.equal(kept.length, 2, 'retention keeps keepLatestCount files');
  t.notOk(
    kept.some(f => f.Path === file!.Path),
    'the oldest went',
  );

  const missing = (await client.post('volumeBackups.create', { name: 'gone', volumeName: 'berth-no-such-volume', prefix: '', cronExpression: '0 3 * * *', destinationId: dest.destinationId, redisId }))
    .body;
  const failed = await client.post('volumeBackups.runManually', { volumeBackupId: missing.volumeBackupId });
  t.equal(failed.status, 400);
  t.match(failed.body.message, /does not exist/);
  t.match(events.at(-1), { volumeBackupId: missing.volumeBackupId, status: 'error' }, 'a failed run raises the failure event');
  t.match((await client.get('volumeBackups.one', { volumeBackupId: missing.volumeBackupId })).body, { lastError: /does not exist/ });

  t.equal((await client.post('volumeBackups.delete', { volumeBackupId })).status, 200);
  t.equal((await client.get('volumeBackups.one', { volumeBackupId })).status, 404);
});
