// Redis (Berth's extension: backup.manualBackupRedis, databaseType "redis"): keys → backup →
// change and delete → restore (the service is stopped, the RDB file written into its volume,
// the service started again) → the keys are back exactly.
import t from 'tap';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, deploymentFinished, removeServiceAndVolume, TEST_REDIS_IMAGE, runFinished } from '@berth/core/testing';
import { runContainerCommand } from '@berth/plugin-workloads/testing';

t.setTimeout(600_000);
const docker = new Docker();
const PASSWORD = 'Redis-pass_1';

t.test('redis backups restore their keys', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const { body: { environment } } = await client.post('project.create', { name: 'Cache' });
  const dest = (await client.post('destination.create', { name: 'disk', provider: 'local', bucket: 'redis', endpoint: '', region: '', accessKey: '', secretAccessKey: '', additionalFlags: null })).body;
  const created = await client.post('redis.create', { name: 'cache', environmentId: environment.environmentId, dockerImage: TEST_REDIS_IMAGE, databasePassword: PASSWORD });
  const { redisId, appName } = created.body as { redisId: string; appName: string };
  t.teardown(() => removeServiceAndVolume(appName));
  t.equal((await runFinished(client, 'redis.deploy', { redisId })).status, 'done');
  const cli = async (...args: string[]) => {
    const [container] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${appName}`] } });
    const r = await runContainerCommand(docker, container!.Id, { cmd: ['redis-cli', '--no-auth-warning', ...args], env: { REDISCLI_AUTH: PASSWORD } });
    if (r.exitCode !== 0) throw new Error(r.stderr);
    return r.stdout.toString('utf8').trim();
  };
  for (let i = 0; i < 50; i++) await cli('SET', `key:${i}`, `value ${i}`);
  await cli('RPUSH', 'list', 'a', 'b', 'c');
  const snapshot = async () => JSON.stringify([await cli('DBSIZE'), await cli('MGET', 'key:0', 'key:49'), await cli('LRANGE', 'list', '0', '-1')]);
  const original = await snapshot();

  const backup = (await client.post('backup.create', { schedule: '0 3 * * *', prefix: 'cache', destinationId: dest.destinationId, database: 'redis', databaseType: 'redis', redisId })).body;
  t.match(backup, { databaseType: 'redis', redisId });
  const ran = await client.post('backup.manualBackupRedis', { backupId: backup.backupId });
  t.equal(ran.body, true, JSON.stringify(ran.body));
  const [file] = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: 'cache/' })).body as { Path: string }[];

  await cli('FLUSHALL');
  await cli('SET', 'only', 'this');
  const queued = await client.post('backup.restoreBackup', { databaseId: redisId, databaseType: 'redis', databaseName: 'redis', backupFile: file!.Path, destinationId: dest.destinationId });
  const restored = await deploymentFinished(client, queued.body.deploymentId);
  t.equal(restored.status, 'done', restored.errorMessage ?? '');
  t.equal(await snapshot(), original, 'the keys are back exactly');
  t.equal(await cli('EXISTS', 'only'), '0', 'what was written after the backup is gone');
});
