// Destinations and database backups against a real S3-compatible server (s3rver, driven by the
// AWS SDK) and a real directory, on the real engine with the real postgres image: write rows →
// backup → list → change and drop → restore → the rows are back exactly; retention keeps N; a
// corrupted file is caught before it reaches the database; a scheduled backup fires, its run a
// deployment of the backup like a manual one.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, Client, type TestServer, deploymentFinished, waitFor, startS3TestServer, removeServiceAndVolume, TEST_POSTGRES_IMAGE, runFinished } from '@berth/core/testing';
import { runContainerCommand } from '@berth/plugin-workloads/testing';

t.setTimeout(900_000);
const docker = new Docker();
const PASSWORD = 'Pg-pass_1#(x)';

t.test('backups of postgres to s3 and to a local directory, restored for real', async t => {
  const s3 = await startS3TestServer(t, ['berth-backups']);
  const base = { deploySettleSeconds: 0, backupTickSeconds: 1 };
  const server = await startTestServer(base);
  let current: TestServer = server;
  t.teardown(() => current.destroy());
  const signedUp = await signUpAdmin(server);
  const { apiKey } = signedUp;
  let client = signedUp.client;
  /** A new kernel on the same data, with `config`; `client` follows it. */
  const restart = async (config: typeof base & Record<string, unknown>, beforeListen?: Parameters<TestServer['restart']>[1]) => {
    await current.stop();
    current = await server.restart(config, beforeListen);
    client = new Client(current.url, { apiKey });
  };
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Backed up' });
  const s3Destination = {
    name: 'bucket',
    provider: 'Minio',
    endpoint: s3.endpoint,
    region: s3.region,
    bucket: 'berth-backups',
    accessKey: s3.accessKey,
    secretAccessKey: s3.secretAccessKey,
    additionalFlags: [],
  };

  t.test('testConnection writes, reads and deletes, and names what failed', async t => {
    const ok = await client.post('destination.testConnection', s3Destination);
    t.equal(ok.status, 200, JSON.stringify(ok.body));
    t.equal(ok.body, true);
    const auth = await client.post('destination.testConnection', { ...s3Destination, accessKey: 'WRONG' });
    t.equal(auth.status, 400);
    t.match(auth.body, { message: /\(auth\)/, issues: [{ path: ['accessKey'] }] });
    const bucket = await client.post('destination.testConnection', { ...s3Destination, bucket: 'missing-bucket' });
    t.match(bucket.body, { message: /\(bucket\)/, issues: [{ path: ['bucket'] }] });
    const endpoint = await client.post('destination.testConnection', { ...s3Destination, endpoint: 'http://127.0.0.1:1' });
    t.match(endpoint.body, { message: /\(endpoint\)/, issues: [{ path: ['endpoint'] }] });
    const notUrl = await client.post('destination.create', { ...s3Destination, endpoint: 'not a url' });
    t.match(notUrl.body, { code: 'BAD_REQUEST', issues: [{ path: ['endpoint'] }] });
    const local = await client.post('destination.testConnection', { ...s3Destination, provider: 'local', bucket: 'probe', endpoint: '' });
    t.equal(local.body, true, 'a local destination too');
    t.same(readdirSync(path.join(server.dataDir, 'backups', 'probe')), [], 'the probe is gone afterwards');
  });

  const s3Dest = (await client.post('destination.create', s3Destination)).body;
  t.match(s3Dest, { destinationId: String, provider: 'Minio', secretAccessKey: s3.secretAccessKey, additionalFlags: [] });
  const localDest = (await client.post('destination.create', { ...s3Destination, name: 'disk', provider: 'local', bucket: 'pg', endpoint: '', accessKey: '', secretAccessKey: '' })).body;
  t.match((await client.get('destination.all')).body, [{ name: 'bucket', secretAccessKey: '' }, { name: 'disk' }], 'all lists them without secrets');
  t.equal((await client.get('destination.one', { destinationId: s3Dest.destinationId })).body.secretAccessKey, s3.secretAccessKey, 'one shows the secret (sealed at rest)');

  const created = await client.post('postgres.create', {
    name: 'shop db',
    environmentId: environment.environmentId,
    dockerImage: TEST_POSTGRES_IMAGE,
    databaseName: 'shop',
    databaseUser: 'shop',
    databasePassword: PASSWORD,
  });
  const { postgresId, appName } = created.body as { postgresId: string; appName: string };
  t.teardown(() => removeServiceAndVolume(appName));
  const deployed = await runFinished(client, 'postgres.deploy', { postgresId });
  t.equal(deployed.status, 'done', deployed.errorMessage ?? '');
  const psql = async (sql: string) => {
    const [container] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${appName}`] } });
    const r = await runContainerCommand(docker, container!.Id, {
      cmd: ['psql', '-h', '127.0.0.1', '-U', 'shop', '-d', 'shop', '-At', '-v', 'ON_ERROR_STOP=1', '-v', 'VERBOSITY=verbose', '-c', sql],
      env: { PGPASSWORD: PASSWORD },
    });
    if (r.exitCode !== 0) throw Object.assign(new Error(r.stderr.toString()), { exitCode: r.exitCode }); // psql: 1 an SQL error (its SQLSTATE in the message), 2 no connection
    return r.stdout.toString('utf8').trim();
  };
  // Every subtest writes a table of its own (a restore brings back the whole database as its file holds it).
  let tables = 0;
  /** A new table of 500 orders: its name and its rows as psql prints them. */
  const ordersTable = async () => {
    const name = `orders_${++tables}`;
    await psql(`create table ${name} (id int primary key, item text, price numeric(8,2)); insert into ${name} select g, 'item ' || g, g * 1.25 from generate_series(1, 500) g`);
    return { name, rows: await psql(`select id, item, price from ${name} order by id`) };
  };

  for (const [label, dest] of [
    ['s3', s3Dest],
    ['local', localDest],
  ] as const) {
    t.test(`${label}: backup → list → change and drop → restore → the rows are back exactly`, async t => {
      const orders = await ordersTable();
      const backup = await client.post('backup.create', {
        schedule: '0 3 * * *',
        enabled: false,
        prefix: `shop-${label}`,
        destinationId: dest.destinationId,
        database: 'shop',
        databaseType: 'postgres',
        postgresId,
        keepLatestCount: 2,
      });
      t.equal(backup.status, 200, JSON.stringify(backup.body));
      t.match(backup.body, { postgresId, databaseType: 'postgres', destination: { destinationId: dest.destinationId }, lastRunAt: null });
      const ran = await client.post('backup.manualBackupPostgres', { backupId: backup.body.backupId });
      t.equal(ran.status, 200, JSON.stringify(ran.body));
      t.equal(ran.body, true);
      const one = (await client.get('backup.one', { backupId: backup.body.backupId })).body;
      t.match(one, { lastError: null, lastRunAt: String });
      const runs = (await client.get('deployment.allByType', { id: backup.body.backupId, type: 'backup' })).body;
      t.match(runs, [{ status: 'done', backupId: backup.body.backupId, action: 'backup' }], "the manual run is a deployment of the backup, as the peer's");
      t.match((await client.get('deployment.readLogs', { deploymentId: runs[0].deploymentId })).body, /Stored .*sha256/, 'with its log');
      const listed = (await client.get('postgres.one', { postgresId })).body.backups.find((b: { backupId: string }) => b.backupId === backup.body.backupId);
      t.match(listed, { deployments: [{ deploymentId: runs[0].deploymentId, status: 'done' }] }, 'the database lists its backups with their runs');

      const folders = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: '' })).body;
      t.match(folders, [{ Path: `shop-${label}/`, IsDir: true }], 'the prefix is a folder');
      const files = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: `shop-${label}/` })).body as {
        Path: string;
        Size: number;
        checksum: string;
        backupId: string;
      }[];
      t.equal(files.length, 1);
      t.match(files[0], { Path: new RegExp(`^shop-${label}/.*\\.dump\\.gz$`), IsDir: false, backupId: backup.body.backupId, checksum: /^[0-9a-f]{64}$/ });
      t.match(files[0], { verified: true, verification: new RegExp(`^public\\.${orders.name}\t500$`, 'm') }, 'proven: restored into a throwaway container, its tables and row counts recorded');
      t.ok(files[0]!.Size > 100, 'the file has the dump in it');

      await psql(`update ${orders.name} set price = 0 where id <= 100; delete from ${orders.name} where id > 400; drop table ${orders.name}`);
      await t.rejects(psql(`select count(*) from ${orders.name}`), { exitCode: 1, message: `ERROR:  42P01: relation "${orders.name}" does not exist` }, 'the table is gone');
      const queued = await client.post('backup.restoreBackup', {
        databaseId: postgresId,
        databaseType: 'postgres',
        databaseName: 'shop',
        backupFile: files[0]!.Path,
        destinationId: dest.destinationId,
      });
      t.equal(queued.status, 200, JSON.stringify(queued.body));
      const restored = await deploymentFinished(client, queued.body.deploymentId);
      t.equal(restored.status, 'done', restored.errorMessage ?? '');
      t.equal(await psql(`select id, item, price from ${orders.name} order by id`), orders.rows, 'every row is back, exactly');
      const log = (await client.get('deployment.readLogs', { deploymentId: queued.body.deploymentId })).body as string;
      t.match(log, /checksum recorded/);
      t.notOk(log.includes(PASSWORD), 'the password is never in the log');

      await client.post('backup.manualBackupPostgres', { backupId: backup.body.backupId });
      await client.post('backup.manualBackupPostgres', { backupId: backup.body.backupId });
      const kept = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: `shop-${label}/` })).body as { Path: string }[];
      t.equal(kept.length, 2, 'retention keeps keepLatestCount files');
      t.notOk(
        kept.some(f => f.Path === files[0]!.Path),
        'the oldest one went',
      );
    });
  }

  t.test('a corrupted file is caught before it reaches the database', async t => {
    const orders = await ordersTable();
    const backup = (await client.post('backup.create', { schedule: '0 3 * * *', prefix: 'corrupt', destinationId: localDest.destinationId, database: 'shop', databaseType: 'postgres', postgresId }))
      .body;
    t.equal((await client.post('backup.manualBackupPostgres', { backupId: backup.backupId })).body, true);
    const [file] = (await client.get('backup.listBackupFiles', { destinationId: localDest.destinationId, search: 'corrupt/' })).body as { Path: string }[];
    const onDisk = path.join(server.dataDir, 'backups', 'pg', file!.Path);
    writeFileSync(onDisk, Buffer.from('not the dump that was written'));
    await psql(`insert into ${orders.name} values (100000, 'after the backup', 1)`);
    const queued = await client.post('backup.restoreBackup', {
      databaseId: postgresId,
      databaseType: 'postgres',
      databaseName: 'shop',
      backupFile: file!.Path,
      destinationId: localDest.destinationId,
    });
    const failed = await deploymentFinished(client, queued.body.deploymentId);
    t.equal(failed.status, 'error');
    t.match(failed.errorMessage, /damaged/);
    t.equal(await psql(`select item from ${orders.name} where id = 100000`), 'after the backup', 'the database was not touched');
  });

  t.test('encrypted backups: unreadable in the destination, restored with the key Berth keeps', async t => {
    const orders = await ordersTable();
    const short = await client.post('backup.create', {
      schedule: '0 3 * * *',
      prefix: 'sealed',
      destinationId: localDest.destinationId,
      database: 'shop',
      databaseType: 'postgres',
      postgresId,
      encryptionKey: 'short',
    });
    t.match(short.body, { code: 'BAD_REQUEST', issues: [{ path: ['encryptionKey'] }] });
    const backup = (
      await client.post('backup.create', {
        schedule: '0 3 * * *',
        prefix: 'sealed',
        destinationId: localDest.destinationId,
        database: 'shop',
        databaseType: 'postgres',
        postgresId,
        encryptionKey: 'the operator passphrase',
      })
    ).body;
    t.match(backup, { encrypted: true });
    t.notOk(JSON.stringify(backup).includes('the operator passphrase'), 'the key is never answered');
    t.equal((await client.post('backup.manualBackupPostgres', { backupId: backup.backupId })).body, true);
    const [file] = (await client.get('backup.listBackupFiles', { destinationId: localDest.destinationId, search: 'sealed/' })).body as { Path: string }[];
    t.match(file!.Path, /\.dump\.gz\.enc$/);
    const raw = readFileSync(path.join(server.dataDir, 'backups', 'pg', file!.Path));
    t.equal(raw.subarray(0, 10).toString(), 'BERTHENC1\n', "the file is Berth's encrypted format");
    t.notOk(raw.includes(Buffer.from([0x1f, 0x8b, 0x08])), 'no gzip stream is visible in it');
    await psql(`drop table ${orders.name}`);
    const queued = await client.post('backup.restoreBackup', {
      databaseId: postgresId,
      databaseType: 'postgres',
      databaseName: 'shop',
      backupFile: file!.Path,
      destinationId: localDest.destinationId,
    });
    const restored = await deploymentFinished(client, queued.body.deploymentId);
    t.equal(restored.status, 'done', restored.errorMessage ?? '');
    t.equal(await psql(`select id, item, price from ${orders.name} order by id`), orders.rows, 'the rows are back, exactly');
  });

  t.test('a failing dump is a failed backup, on the record', async t => {
    const backup = (await client.post('backup.create', { schedule: '0 3 * * *', prefix: 'nodb', destinationId: s3Dest.destinationId, database: 'no_such_db', databaseType: 'postgres', postgresId }))
      .body;
    const ran = await client.post('backup.manualBackupPostgres', { backupId: backup.backupId });
    t.equal(ran.status, 400);
    t.match(ran.body.message, /dump program failed.*no_such_db/);
    t.match((await client.get('backup.one', { backupId: backup.backupId })).body, { lastError: /no_such_db/ });
    t.same((await client.get('backup.listBackupFiles', { destinationId: s3Dest.destinationId, search: 'nodb/' })).body, [], 'nothing was left in the bucket');
  });

  t.test('a scheduled backup fires on its cron', async t => {
    const bad = await client.post('backup.create', { schedule: 'every day', prefix: 'x', destinationId: s3Dest.destinationId, database: 'shop', databaseType: 'postgres', postgresId });
    t.match(bad.body, { code: 'BAD_REQUEST', issues: [{ path: ['schedule'] }] });
    const backup = (
      await client.post('backup.create', {
        schedule: '*/2 * * * * *',
        enabled: true,
        prefix: 'scheduled',
        destinationId: s3Dest.destinationId,
        database: 'shop',
        databaseType: 'postgres',
        postgresId,
        keepLatestCount: 1,
      })
    ).body;
    const fired = await waitFor(
      'the scheduled backup ran',
      async () => {
        const one = (await client.get('backup.one', { backupId: backup.backupId })).body;
        return one.lastRunAt ? one : undefined;
      },
      { timeout: 60_000, interval: 500 },
    );
    t.equal(fired.lastError, null, 'it succeeded');
    const runs = (await client.get('deployment.allByType', { id: backup.backupId, type: 'backup' })).body as { status: string; deploymentId: string }[];
    t.match(runs, [{ status: 'done', action: 'backup', backupId: backup.backupId }], 'the scheduled run is a deployment of the backup, as a manual one');
    t.match((await client.get('deployment.readLogs', { deploymentId: runs[runs.length - 1]!.deploymentId })).body, /Stored .*sha256/, 'with its log');
    const listed = (await client.get('postgres.one', { postgresId })).body.backups.find((b: { backupId: string }) => b.backupId === backup.backupId);
    t.ok(
      listed.deployments.some((d: { deploymentId: string }) => runs.some(r => r.deploymentId === d.deploymentId)),
      "the backup's deployments list it",
    );
    await client.post('backup.update', { backupId: backup.backupId, schedule: '0 3 * * *', enabled: false, prefix: 'scheduled', destinationId: s3Dest.destinationId, database: 'shop' });
    const files = (await client.get('backup.listBackupFiles', { destinationId: s3Dest.destinationId, search: 'scheduled/' })).body as unknown[];
    t.ok(files.length >= 1, 'its file is in the bucket');
  });

  t.test('schedules survive a restart; the windows missed while down are on the record and raise the failure event', async t => {
    const backup = (
      await client.post('backup.create', {
        schedule: '*/2 * * * * *',
        enabled: true,
        prefix: 'restarts',
        destinationId: s3Dest.destinationId,
        database: 'shop',
        databaseType: 'postgres',
        postgresId,
        keepLatestCount: 1,
      })
    ).body;
    const ranOnce = await waitFor(
      'a first scheduled run',
      async () => {
        const one = (await client.get('backup.one', { backupId: backup.backupId })).body;
        return one.lastRunAt ? one : undefined;
      },
      { timeout: 60_000, interval: 500 },
    );
    // Windows that passed while a run was still going are missed ones too: count from here.
    const missedBefore = (await client.get('backup.one', { backupId: backup.backupId })).body.missedWindows as number;
    t.teardown(() => restart(base));
    await current.stop();
    await new Promise(r => setTimeout(r, 8000));
    // Listen before the new kernel's jobs start: the tick that finds the missed windows may be its very first.
    const events: { backupId: string; status: string; error: string | null }[] = [];
    await restart({ ...base, backupTickSeconds: 3 }, kernel => void kernel.container.cradle.events.on('databaseBackup', e => void events.push(e)));
    const after = client;
    const resumed = await waitFor(
      'a run after the restart',
      async () => {
        const one = (await after.get('backup.one', { backupId: backup.backupId })).body;
        const raised = events.some(e => e.backupId === backup.backupId && e.status === 'error' && /Missed \d+ scheduled window/.test(e.error ?? ''));
        return one.lastRunAt > ranOnce.lastRunAt && one.missedWindows > missedBefore && raised ? one : undefined;
      },
      { timeout: 60_000, interval: 500 },
    );
    t.ok(resumed.missedWindows - missedBefore >= 2, `the windows of the ≈8 s down are counted (${resumed.missedWindows - missedBefore})`);
    t.match(resumed, { lastMissedAt: String });
    t.pass('a databaseBackup error event said so');
    await after.post('backup.update', { backupId: backup.backupId, schedule: '0 3 * * *', enabled: false, prefix: 'restarts', destinationId: s3Dest.destinationId, database: 'shop' });
  });

  t.test('backupVerify "schedule": each backup\'s newest unchecked file is proven at the next window; a corrupted one is a failure on the record and an event', async t => {
    const orders = await ordersTable();
    t.teardown(() => restart(base));
    // A yearly window that has passed: files written now wait for the next window.
    await restart({ ...base, backupVerify: 'schedule', backupVerifySchedule: '0 0 1 1 *' });
    let c = client;
    const files: Record<string, { Path: string; verified: boolean | null; verification: string | null }> = {};
    const backups: Record<string, string> = {};
    for (const name of ['later-ok', 'later-bad']) {
      backups[name] = (
        await c.post('backup.create', { schedule: '0 3 * * *', enabled: false, prefix: name, destinationId: localDest.destinationId, database: 'shop', databaseType: 'postgres', postgresId })
      ).body.backupId;
      t.equal((await c.post('backup.manualBackupPostgres', { backupId: backups[name] })).body, true);
      [files[name]] = (await c.get('backup.listBackupFiles', { destinationId: localDest.destinationId, search: `${name}/` })).body;
      t.match(files[name], { verified: null, verification: null }, `${name}: not checked after the run`);
    }
    writeFileSync(path.join(server.dataDir, 'backups', 'pg', files['later-bad']!.Path), Buffer.from('not the dump that was written'));
    const events: { backupId: string; status: string; error: string | null }[] = [];
    await restart({ ...base, backupVerify: 'schedule', backupVerifySchedule: '*/2 * * * * *' }, kernel => void kernel.container.cradle.events.on('databaseBackup', e => void events.push(e)));
    c = client;
    const checked = await waitFor(
      'both files checked',
      async () => {
        const found = await Promise.all(['later-ok', 'later-bad'].map(async name => (await c.get('backup.listBackupFiles', { destinationId: localDest.destinationId, search: `${name}/` })).body[0]));
        return found.every(f => f.verified !== null) ? found : undefined;
      },
      { timeout: 120_000, interval: 1000 },
    );
    t.match(checked[0], { verified: true, verification: new RegExp(`^public\\.${orders.name}\t500$`, 'm') }, 'the good file restored into a throwaway container');
    t.match(checked[1], { verified: false, verification: String });
    t.match((await c.get('backup.one', { backupId: backups['later-bad'] })).body, { lastError: /failed its scheduled restore check/ });
    t.ok(
      events.some(e => e.backupId === backups['later-bad'] && e.status === 'error'),
      'a failed databaseBackup event',
    );
    t.notOk(
      events.some(e => e.backupId === backups['later-ok'] && e.status === 'error'),
      'none for the good one',
    );
  });
});
