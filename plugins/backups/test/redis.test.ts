// Redis (Berth's extension: backup.manualBackupRedis, databaseType "redis"): keys → backup
// (proven in a throwaway redis: its keys per database recorded with the file) → change and
// delete → restore (the service is stopped, the RDB file written into its volume, the service
// started again) → the keys are back exactly; a file that is not an RDB fails its check.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, deploymentFinished, removeServiceAndVolume, TEST_REDIS_IMAGE, runFinished, Client, waitFor, type TestServer } from '@berth/core/testing';
import { runContainerCommand } from '@berth/plugin-workloads/testing';

t.setTimeout(600_000);
const docker = new Docker();
const PASSWORD = 'Redis-pass_1';

t.test('redis backups restore their keys', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0 });
  let current: TestServer = server;
  t.teardown(() => current.destroy());
  const { client, apiKey } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Cache' });
  const dest = (await client.post('destination.create', { name: 'disk', provider: 'local', bucket: 'redis', endpoint: '', region: '', accessKey: '', secretAccessKey: '', additionalFlags: null }))
    .body;
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
  t.match(file, { verified: true, verification: /^db0\t51$/m }, 'restored into a throwaway redis: its 50 strings and 1 list are counted');

  await cli('FLUSHALL');
  await cli('SET', 'only', 'this');
  const queued = await client.post('backup.restoreBackup', { databaseId: redisId, databaseType: 'redis', databaseName: 'redis', backupFile: file!.Path, destinationId: dest.destinationId });
  const restored = await deploymentFinished(client, queued.body.deploymentId);
  t.equal(restored.status, 'done', restored.errorMessage ?? '');
  t.equal(await snapshot(), original, 'the keys are back exactly');
  t.equal(await cli('EXISTS', 'only'), '0', 'what was written after the backup is gone');

  t.test('a file that is not an RDB fails its restore check', async t => {
    // A yearly window that has passed: the file waits unchecked until the next restart's window.
    current = await current.restart({ deploySettleSeconds: 0, backupTickSeconds: 1, backupVerify: 'schedule', backupVerifySchedule: '0 0 1 1 *' });
    let c = new Client(current.url, { apiKey });
    const bad = (await c.post('backup.create', { schedule: '0 3 * * *', enabled: false, prefix: 'bad', destinationId: dest.destinationId, database: 'redis', databaseType: 'redis', redisId })).body;
    t.equal((await c.post('backup.manualBackupRedis', { backupId: bad.backupId })).body, true);
    const [unchecked] = (await c.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: 'bad/' })).body as { Path: string }[];
    t.match(unchecked, { verified: null }, 'not checked after the run');
    // A whole gzip stream: the transfer succeeds and the server itself must refuse the file.
    writeFileSync(path.join(current.dataDir, 'backups', 'redis', unchecked!.Path), gzipSync(Buffer.from('not the snapshot that was written')));
    current = await current.restart({ deploySettleSeconds: 0, backupTickSeconds: 1, backupVerify: 'schedule', backupVerifySchedule: '*/2 * * * * *' });
    c = new Client(current.url, { apiKey });
    const checked = await waitFor(
      'the file checked',
      async () => {
        const [found] = (await c.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: 'bad/' })).body as { verified: boolean | null }[];
        return found?.verified === null ? undefined : found;
      },
      { timeout: 120_000, interval: 1000 },
    );
    t.match(
      checked,
      { verified: false, verification: /does not restore: the Redis server stopped while loading it \(exit code 1\): .*Bad file format/ },
      'the server refused the file, in its own words',
    );
    t.match((await c.get('backup.one', { backupId: bad.backupId })).body, { lastError: /failed its scheduled restore check/ });
  });
});
