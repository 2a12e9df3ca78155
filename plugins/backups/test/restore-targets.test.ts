// Where a restore goes: backup.restoreBackup's databaseId is the target (any database of the
// kind in the caller's organization) and databaseName may be one that does not exist yet. On the
// real engine: a backup of postgres A restored into postgres B, and into a new database of A.
// (Another organization's database is a 404: api.test.ts.)
import t from 'tap';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, deploymentFinished, removeServiceAndVolume, runFinished, TEST_POSTGRES_IMAGE, type Client } from '@berth/core/testing';
import { runContainerCommand } from '@berth/plugin-workloads/testing';

t.setTimeout(600_000);
const docker = new Docker();

/** A deployed postgres record (removed with the test), and psql into one of its databases as its user. */
async function postgres(teardown: (fn: () => unknown) => void, client: Client, environmentId: string, name: string, password: string) {
  const created = await client.post('postgres.create', { name, environmentId, dockerImage: TEST_POSTGRES_IMAGE, databaseName: name, databaseUser: name, databasePassword: password });
  if (created.status !== 200) throw new Error(`postgres.create: ${JSON.stringify(created.body)}`);
  const { postgresId, appName } = created.body as { postgresId: string; appName: string };
  teardown(() => removeServiceAndVolume(appName));
  const deployed = await runFinished(client, 'postgres.deploy', { postgresId });
  if (deployed.status !== 'done') throw new Error(`postgres.deploy: ${deployed.errorMessage}`);
  const psql = async (database: string, sql: string) => {
    const [container] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${appName}`] } });
    const r = await runContainerCommand(docker, container!.Id, {
      cmd: ['psql', '-h', '127.0.0.1', '-U', name, '-d', database, '-At', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose', '-c', sql],
      env: { PGPASSWORD: password },
    });
    if (r.exitCode !== 0) throw Object.assign(new Error(r.stderr.toString()), { exitCode: r.exitCode }); // psql: 1 an SQL error (its SQLSTATE in the message), 2 no connection
    return r.stdout.toString('utf8').trim();
  };
  return { postgresId, psql };
}

t.test('a backup restored into another database and into a new database', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Targets' });
  const dest = (await client.post('destination.create', { name: 'disk', provider: 'local', bucket: 'targets', endpoint: '', region: '', accessKey: '', secretAccessKey: '', additionalFlags: null }))
    .body;
  const a = await postgres(fn => t.teardown(fn), client, environment.environmentId, 'alpha', 'Alpha-pass_1');
  const b = await postgres(fn => t.teardown(fn), client, environment.environmentId, 'beta', 'Beta-pass_1');
  await a.psql('alpha', `create table orders (id int primary key, item text); insert into orders select g, 'item ' || g from generate_series(1, 50) g`);
  const original = await a.psql('alpha', 'select id, item from orders order by id');

  const backup = (
    await client.post('backup.create', { schedule: '0 3 * * *', prefix: 'alpha', destinationId: dest.destinationId, database: 'alpha', databaseType: 'postgres', postgresId: a.postgresId })
  ).body;
  t.equal((await client.post('backup.manualBackupPostgres', { backupId: backup.backupId })).body, true);
  const [file] = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: 'alpha/' })).body as { Path: string }[];
  const restore = async (databaseId: string, databaseName: string) => {
    const queued = await client.post('backup.restoreBackup', { databaseId, databaseType: 'postgres', databaseName, backupFile: file!.Path, destinationId: dest.destinationId });
    t.equal(queued.status, 200, JSON.stringify(queued.body));
    return deploymentFinished(client, queued.body.deploymentId);
  };

  t.test('into another postgres record (its own database)', async t => {
    await t.rejects(b.psql('beta', 'select count(*) from orders'), { exitCode: 1, message: 'ERROR:  42P01: relation "orders" does not exist' }, 'B has no orders before');
    const done = await restore(b.postgresId, 'beta');
    t.equal(done.status, 'done', done.errorMessage ?? '');
    t.equal(await b.psql('beta', 'select id, item from orders order by id'), original, "A's rows are in B, exactly");
    t.equal(await a.psql('alpha', 'select count(*) from orders'), '50', 'A is untouched');
  });

  t.test('into a database of A that does not exist yet: created, then restored', async t => {
    await t.rejects(a.psql('alpha_copy', 'select 1'), { exitCode: 2, message: 'FATAL:  database "alpha_copy" does not exist' }, 'alpha_copy does not exist before');
    const done = await restore(a.postgresId, 'alpha_copy');
    t.equal(done.status, 'done', done.errorMessage ?? '');
    t.equal(await a.psql('alpha_copy', 'select id, item from orders order by id'), original, 'the rows are in the new database');
    const again = await restore(a.postgresId, 'alpha_copy');
    t.equal(again.status, 'done', 'a second restore into it (it exists now) works too');
    const log = (await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body as string;
    t.match(log, /alpha_copy is there/, 'the log says the database was made ready');
  });
});
