// Database backups of a service of a compose stack (backupType "compose"), on the real engine:
// a stack of each compose type (docker-compose, and docker stack deploy) runs postgres from a local image → rows → manualBackupCompose (the
// credentials read from the service's container, the file verified in a throwaway container of
// the service's image) → drop → restoreBackup into the service → the rows are back exactly.
import t from 'tap';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, deploymentFinished, runFinished, waitFor, TEST_POSTGRES_IMAGE } from '@berth/core/testing';
import { runContainerCommand } from '@berth/plugin-workloads/testing';

t.setTimeout(600_000);
const docker = new Docker();
const PASSWORD = 'Cmp-pass_1';

const stackFile = `services:
  db:
    image: ${TEST_POSTGRES_IMAGE}
    stop_grace_period: 1s
    environment:
      POSTGRES_USER: shop
      POSTGRES_PASSWORD: ${PASSWORD}
      POSTGRES_DB: shop
    deploy:
      endpoint_mode: dnsrr
`;

t.test('a postgres service of a compose stack: backup, drop, restore', async t => {
  const server = await startTestServer({ deploySettleSeconds: 1 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Stacked' });
  const dest = (await client.post('destination.create', { name: 'disk', provider: 'local', bucket: 'stacks', endpoint: '', region: '', accessKey: '', secretAccessKey: '', additionalFlags: null }))
    .body;

  for (const type of ['docker-compose', 'stack'] as const) {
    t.test(type, async t => {
      const appName = `cmp-bk-${type === 'stack' ? 'stk' : 'dc'}-${Date.now().toString(36)}`;
      // The service's containers, by the engine's labels of each compose type.
      const serviceLabels =
        type === 'stack' ? [`com.docker.stack.namespace=${appName}`, `com.docker.swarm.service.name=${appName}_db`] : [`com.docker.compose.project=${appName}`, 'com.docker.compose.service=db'];
      const prefix = `stack-${type}`;
      const created = await client.post('compose.create', { name: `shop stack (${type})`, environmentId: environment.environmentId, composeType: type, appName, composeFile: stackFile });
      t.equal(created.status, 200, JSON.stringify(created.body));
      const { composeId } = created.body as { composeId: string };
      t.teardown(async () => {
        await client.post('compose.delete', { composeId, deleteVolumes: true }).catch(() => {});
      });
      const deployed = await runFinished(client, 'compose.deploy', { composeId });
      t.equal(deployed.status, 'done', deployed.errorMessage ?? '');

      const psql = async (sql: string) => {
        const [container] = await docker.listContainers({ filters: { label: serviceLabels } });
        if (!container) throw new Error('no db container');
        const r = await runContainerCommand(docker, container.Id, {
          cmd: ['psql', '-h', '127.0.0.1', '-U', 'shop', '-d', 'shop', '-At', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose', '-c', sql],
          env: { PGPASSWORD: PASSWORD },
        });
        if (r.exitCode !== 0) throw Object.assign(new Error(r.stderr.toString()), { exitCode: r.exitCode }); // psql: 1 an SQL error (its SQLSTATE in the message), 2 no connection
        return r.stdout.toString('utf8').trim();
      };
      await waitFor(
        'postgres in the stack accepts connections',
        () =>
          psql('select 1').then(
            () => true,
            () => undefined,
          ),
        { timeout: 90_000, interval: 500 },
      );
      await psql(`create table orders (id int primary key, item text); insert into orders select g, 'item ' || g from generate_series(1, 3) g`);
      const original = await psql('select id, item from orders order by id');

      const fields = { schedule: '0 3 * * *', prefix, destinationId: dest.destinationId, database: 'shop', backupType: 'compose', composeId };
      const noService = await client.post('backup.create', { ...fields, databaseType: 'postgres' });
      t.match(noService.body, { code: 'BAD_REQUEST', issues: [{ path: ['serviceName'] }] }, 'a compose backup names its service');
      const redis = await client.post('backup.create', { ...fields, databaseType: 'redis', serviceName: 'db' });
      t.match(redis.body, { code: 'BAD_REQUEST', issues: [{ path: ['databaseType'] }] }, 'only engines that restore into a running server');

      const backup = await client.post('backup.create', { ...fields, databaseType: 'postgres', serviceName: 'db' });
      t.equal(backup.status, 200, JSON.stringify(backup.body));
      t.match(backup.body, { backupType: 'compose', databaseType: 'postgres', composeId, postgresId: null, serviceName: 'db' });
      t.match((await client.get('backup.one', { backupId: backup.body.backupId })).body, { composeId, postgres: null, compose: { composeId, appName } }, "one joins the stack's record, as the peer's");
      const wrongOp = await client.post('backup.manualBackupPostgres', { backupId: backup.body.backupId });
      t.equal(wrongOp.status, 400, 'a compose backup runs through manualBackupCompose only');

      const ran = await client.post('backup.manualBackupCompose', { backupId: backup.body.backupId });
      t.equal(ran.status, 200, JSON.stringify(ran.body));
      t.equal(ran.body, true);
      const runs = (await client.get('deployment.allByType', { id: backup.body.backupId, type: 'backup' })).body;
      t.match(runs, [{ status: 'done', action: 'backup' }], 'the run is a deployment of the backup');
      t.match(
        (await client.get('compose.one', { composeId })).body.backups,
        [{ backupId: backup.body.backupId, serviceName: 'db', deployments: [{ deploymentId: runs[0].deploymentId }] }],
        "the stack lists its backups with their runs, as the peer's",
      );
      const log = (await client.get('deployment.readLogs', { deploymentId: runs[0].deploymentId })).body as string;
      t.notOk(log.includes(PASSWORD), 'the password read from the container never reaches the log');
      const [file] = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: `${prefix}/` })).body as { Path: string; verified: boolean }[];
      t.match(file, { backupId: backup.body.backupId, verified: true, verification: /^public\.orders\t3$/m }, "restored into a throwaway container of the service's image");

      await psql('drop table orders');
      await t.rejects(psql('select count(*) from orders'), { exitCode: 1, message: 'ERROR:  42P01: relation "orders" does not exist' }, 'the table is gone');
      const badRestore = await client.post('backup.restoreBackup', {
        databaseId: composeId,
        databaseType: 'postgres',
        backupType: 'compose',
        databaseName: 'shop',
        backupFile: file!.Path,
        destinationId: dest.destinationId,
      });
      t.match(badRestore.body, { code: 'BAD_REQUEST', issues: [{ path: ['metadata', 'serviceName'] }] }, "the restore names its service as the peer's does (metadata.serviceName)");
      const queued = await client.post('backup.restoreBackup', {
        databaseId: composeId,
        databaseType: 'postgres',
        backupType: 'compose',
        databaseName: 'shop',
        backupFile: file!.Path,
        destinationId: dest.destinationId,
        metadata: { serviceName: 'db' },
      });
      t.equal(queued.status, 200, JSON.stringify(queued.body));
      const restored = await deploymentFinished(client, queued.body.deploymentId);
      t.equal(restored.status, 'done', restored.errorMessage ?? '');
      t.equal(await psql('select id, item from orders order by id'), original, 'every row is back, exactly');

      await client.post('compose.stop', { composeId });
      await waitFor('the stack stopped', async () => (await docker.listContainers({ filters: { label: serviceLabels } })).length === 0 || undefined, { timeout: 60_000 });
      const stopped = await client.post('backup.manualBackupCompose', { backupId: backup.body.backupId });
      t.match(stopped.body, { message: /not running/ }, 'a stopped service is a failed backup that says so');

      t.equal((await client.post('compose.delete', { composeId, deleteVolumes: true })).status, 200);
      t.equal((await client.get('backup.one', { backupId: backup.body.backupId })).status, 404, 'a removed stack takes its backups');
    });
  }
});
