// The same round trip for the MySQL-protocol kinds on the real engine (the mysql kind on the
// MariaDB image, as test/databases.test.ts runs it): rows → backup (proven in a throwaway copy: its
// tables and exact row counts recorded) → drop → restore → the rows are back; and restored into a
// database name that does not exist yet.
import t from 'tap';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, deploymentFinished, removeServiceAndVolume, TEST_MARIADB_IMAGE, runFinished } from '@berth/core/testing';
import { runContainerCommand } from '@berth/plugin-workloads/testing';

t.setTimeout(600_000);
const docker = new Docker();
const PASSWORD = 'My-pass_1#x';

t.test('mysql and mariadb backups restore their rows', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'SQL' });
  const dest = (await client.post('destination.create', { name: 'disk', provider: 'local', bucket: 'sql', endpoint: '', region: '', accessKey: '', secretAccessKey: '', additionalFlags: null })).body;

  for (const [kind, suffix, program] of [
    ['mariadb', 'Mariadb', 'mariadb'],
    ['mysql', 'MySql', 'mariadb'],
  ] as const) {
    t.test(kind, async t => {
      const created = await client.post(`${kind}.create`, {
        name: `${kind} db`,
        environmentId: environment.environmentId,
        dockerImage: TEST_MARIADB_IMAGE,
        databaseName: 'shop',
        databaseUser: 'shop',
        databasePassword: PASSWORD,
        databaseRootPassword: 'Root-pass_1',
      });
      t.equal(created.status, 200, JSON.stringify(created.body));
      const id = created.body[`${kind}Id`] as string;
      const appName = created.body.appName as string;
      t.teardown(() => removeServiceAndVolume(appName));
      const deployed = await runFinished(client, `${kind}.deploy`, { [`${kind}Id`]: id });
      t.equal(deployed.status, 'done', deployed.errorMessage ?? '');
      const sql = async (statement: string, database = 'shop') => {
        const [container] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${appName}`] } });
        const r = await runContainerCommand(docker, container!.Id, {
          cmd: [program, '--protocol=TCP', '--host=127.0.0.1', '--user=shop', `--database=${database}`, '--batch', '--skip-column-names', '-e', statement],
          env: { MYSQL_PWD: PASSWORD },
        });
        if (r.exitCode !== 0) throw new Error(r.stderr);
        return r.stdout.toString('utf8').trim();
      };
      const backup = (await client.post('backup.create', { schedule: '0 3 * * *', prefix: kind, destinationId: dest.destinationId, database: 'shop', databaseType: kind, [`${kind}Id`]: id })).body;
      t.match(backup, { databaseType: kind, [`${kind}Id`]: id });
      const backUp = async () => {
        const ran = await client.post(`backup.manualBackup${suffix}`, { backupId: backup.backupId });
        t.equal(ran.body, true, JSON.stringify(ran.body));
        const files = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: `${kind}/` })).body as { Path: string; verified: boolean; verification: string }[];
        return files.sort((a, b) => b.Path.localeCompare(a.Path))[0]!;
      };
      if (kind === 'mysql') t.match(await backUp(), { verified: true, verification: '' }, 'an empty database is proven too, with no tables to count');

      await sql(`create table orders (id int primary key, item text); insert into orders values (1, 'one'), (2, 'two'), (3, 'three ünïcode')`);
      await sql('create table `odd`` name` (x int); insert into `odd`` name` values (1), (2)');
      const original = await sql('select id, item from orders order by id');
      const file = await backUp();
      t.match(file, { verified: true }, 'the file is listed, restored into a throwaway container once');
      t.match(file, { verification: /^orders\t3$/m }, "the copy's tables and exact row counts are recorded");
      t.match(file, { verification: /^odd` name\t2$/m }, 'a name with a backquote and a space is counted too');

      await sql('drop table orders');
      const queued = await client.post('backup.restoreBackup', { databaseId: id, databaseType: kind, databaseName: 'shop', backupFile: file.Path, destinationId: dest.destinationId });
      const restored = await deploymentFinished(client, queued.body.deploymentId);
      t.equal(restored.status, 'done', restored.errorMessage ?? '');
      t.equal(await sql('select id, item from orders order by id'), original, 'the rows are back exactly');

      const copy = await client.post('backup.restoreBackup', { databaseId: id, databaseType: kind, databaseName: 'shop_copy', backupFile: file.Path, destinationId: dest.destinationId });
      const copied = await deploymentFinished(client, copy.body.deploymentId);
      t.equal(copied.status, 'done', copied.errorMessage ?? '');
      t.equal(await sql('select id, item from orders order by id', 'shop_copy'), original, 'a new database name is created (root grants it to the user) and restored into');
    });
  }
});
