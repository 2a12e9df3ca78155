// Web-server backups (Berth's own data) through the API, against the real S3-compatible test
// server: the archive lands in the bucket, is downloaded, `berth restore` brings it into a new data
// directory (a real embedded PostgreSQL is created there) and a Berth started on it has the
// projects. And the refusals: 409 without the operator's passphrase, 403 for anyone but the
// instance operators, 400 naming the fields.
import t from 'tap';
import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createKernel, runPluginCommand } from '@berth/core';
import { startTestServer, signUpAdmin, addMember, startS3TestServer, waitFor, Client } from '@berth/core/testing';

/** `berth restore`, the backups plugin's command, run as the operator command runs it (no HTTP server; it opens the database itself). */
async function restoreCommand(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  if (!(await runPluginCommand('restore', args, env))) throw new Error('no enabled plugin has the command restore');
}

t.setTimeout(300_000);
const PASSPHRASE = 'the operator keeps this one 42';
const BUCKET = 'berth-own';

t.test('a web-server backup to S3, restored by berth restore into a new data directory', async t => {
  const s3 = await startS3TestServer(t, [BUCKET]);
  const server = await startTestServer({ backupPassphrase: PASSPHRASE, backupTickSeconds: 1 });
  t.teardown(() => server.destroy());
  const { client, apiKey } = await signUpAdmin(server);
  const shop = await client.post('project.create', { name: 'Shop', env: 'TOKEN=s3cret' });
  t.equal(shop.status, 200);
  t.equal((await client.post('project.create', { name: 'Blog' })).status, 200);
  const location = { endpoint: s3.endpoint, region: s3.region, bucket: BUCKET, accessKey: s3.accessKey, secretAccessKey: s3.secretAccessKey };
  const dest = (await client.post('destination.create', { name: 'own', provider: 'Minio', ...location, additionalFlags: [] })).body;
  const input = { schedule: '0 3 * * *', prefix: 'instance', destinationId: dest.destinationId, database: 'berth', databaseType: 'web-server', keepLatestCount: 1 };
  const events: { event: string; backupId: string; status: string; file: string | null }[] = [];
  // A backup of Berth's own data is ownDataBackup on the bus (the dokployBackup toggle), never databaseBackup.
  for (const event of ['databaseBackup', 'ownDataBackup'] as const) server.kernel.container.cradle.events.on(event, e => void events.push({ event, ...e }));

  t.test('400 names the fields', async t => {
    const missing = await client.post('backup.create', { destinationId: dest.destinationId, database: 'berth', databaseType: 'web-server' });
    t.equal(missing.status, 400);
    t.match(missing.body.issues, [{ path: ['schedule'] }], 'schedule is named');
    t.ok(
      (missing.body.issues as { path: string[] }[]).some(i => i.path[0] === 'prefix'),
      'prefix is named',
    );
    const badCron = await client.post('backup.create', { ...input, schedule: 'nightly' });
    t.match(badCron.body, { code: 'BAD_REQUEST', issues: [{ path: ['schedule'] }] });
    const noId = await client.post('backup.manualBackupWebServer', {});
    t.match(noId.body, { code: 'BAD_REQUEST', issues: [{ path: ['backupId'] }] });
  });

  const created = await client.post('backup.create', input);
  t.equal(created.status, 200, JSON.stringify(created.body));
  t.match(
    created.body,
    { databaseType: 'web-server', backupType: 'database', postgresId: null, mysqlId: null, prefix: 'instance', keepLatestCount: 1 },
    "no database id: it is the instance's own data",
  );
  const backupId = created.body.backupId as string;
  t.match((await client.get('backup.one', { backupId })).body, { backupId, databaseType: 'web-server', postgres: null }, 'backup.one answers it');

  t.test("403 for anyone but the instance operators (the owner and admins of the instance's organization), naming the field", async t => {
    const admin = await addMember(server, client, 'ops@example.com', 'member');
    const create = await admin.client.post('backup.create', input);
    t.equal(create.status, 403, JSON.stringify(create.body));
    t.match(create.body.issues, [{ path: ['databaseType'] }]);
    const run = await admin.client.post('backup.manualBackupWebServer', { backupId });
    t.equal(run.status, 403);
    t.match(run.body.issues, [{ path: ['backupId'] }]);
    t.equal((await admin.client.post('backup.update', { ...input, backupId, prefix: 'elsewhere' })).status, 403, 'nor change where it goes');
  });

  t.test("a database backup's run refuses it", async t => {
    const wrong = await client.post('backup.manualBackupPostgres', { backupId });
    t.match(wrong.body, { code: 'BAD_REQUEST', issues: [{ path: ['backupId'] }] });
  });

  const run = await client.post('backup.manualBackupWebServer', { backupId });
  t.equal(run.status, 200, JSON.stringify(run.body));
  t.equal(run.body, true, "the peer's answer: true once it is stored");
  const runs = (await client.get('deployment.allByType', { id: backupId, type: 'backup' })).body as { deploymentId: string; status: string; title: string }[];
  t.match(runs, [{ status: 'done', title: 'Web Server Backup' }], 'the run is a deployment of the backup');
  const log = (await client.get('deployment.readLogs', { deploymentId: runs[0]!.deploymentId })).body as string;
  t.match(log, /Stored instance\/webserver-backup-.*\.archive\.enc: \d+ bytes, sha256 [0-9a-f]{64}/, 'its log says what was stored');
  t.notOk(log.includes(PASSPHRASE), 'the passphrase is not in the log');
  t.match(events, [{ event: 'ownDataBackup', backupId, status: 'success' }], 'the ownDataBackup event');
  t.equal(events.length, 1, 'and no databaseBackup');

  const files = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: 'instance/' })).body as { Path: string; Size: number; checksum: string; backupId: string }[];
  t.equal(files.length, 1);
  t.match(files[0], { backupId, Path: /^instance\/webserver-backup-.*\.archive\.enc$/, checksum: /^[0-9a-f]{64}$/ }, 'listBackupFiles shows it with its checksum');
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'berth-web-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  const archive = path.join(scratch, 'downloaded.archive.enc');
  const storage = server.kernel.container.cradle.providers.all('storage').find(s => s.servesOtherProviders)!;
  await pipeline(await storage.open({ provider: 'Minio', ...location }).get(files[0]!.Path), createWriteStream(archive));
  const bytes = readFileSync(archive);
  t.equal(bytes.length, files[0]!.Size, 'the downloaded file has the listed size');
  t.equal(createHash('sha256').update(bytes).digest('hex'), files[0]!.checksum, 'and the recorded checksum');
  t.notOk(bytes.includes(Buffer.from('CREATE TABLE')), 'the dump is not in the bucket in clear');
  t.notOk(bytes.includes(readFileSync(path.join(server.dataDir, 'secret.key')).subarray(0, 20)), 'nor the sealing key');

  t.test('berth restore into a new data directory; the restored instance starts with its projects', async t => {
    const target = path.join(scratch, 'restored');
    await restoreCommand(['--from', archive, '--passphrase-env', 'P', '--data-dir', target], { P: PASSPHRASE });
    const kernel = await createKernel({ env: {}, config: { port: 0, host: '127.0.0.1', dataDir: target, logLevel: 'silent', jobs: false } });
    t.teardown(() => kernel.stop());
    const restored = new Client(await kernel.listen(), { apiKey });
    const names = ((await restored.get('project.all', {})).body as { name: string }[]).map(p => p.name).sort();
    t.same(names, ['Blog', 'Shop'], 'the projects are back');
    t.equal((await restored.get('project.one', { projectId: shop.body.project.projectId })).body.env, 'TOKEN=s3cret', 'the sealed env opens with the restored key');
  });

  t.test('berth restore reads the archive from the bucket too', async t => {
    const from = `s3://${BUCKET}/${files[0]!.Path}`;
    const target = path.join(scratch, 'from-s3');
    const keys = { P: PASSPHRASE, AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey };
    await t.rejects(restoreCommand(['--from', from, '--passphrase-env', 'P', '--data-dir', target], keys), /--endpoint is required/);
    await t.rejects(restoreCommand(['--from', from, '--endpoint', s3.endpoint, '--passphrase-env', 'P', '--data-dir', target], { P: PASSPHRASE }), /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
    await t.rejects(
      restoreCommand(['--from', `s3://${BUCKET}/instance/none.enc`, '--endpoint', s3.endpoint, '--region', s3.region, '--passphrase-env', 'P', '--data-dir', target], keys),
      /could not be decrypted.*nothing was written/,
      'a missing object stops before anything is written',
    );
    await restoreCommand(['--from', from, '--endpoint', s3.endpoint, '--region', s3.region, '--passphrase-env', 'P', '--data-dir', target], keys);
    const kernel = await createKernel({ env: {}, config: { port: 0, host: '127.0.0.1', dataDir: target, logLevel: 'silent', jobs: false } });
    t.teardown(() => kernel.stop());
    const restored = new Client(await kernel.listen(), { apiKey });
    t.same(((await restored.get('project.all', {})).body as { name: string }[]).map(p => p.name).sort(), ['Blog', 'Shop'], 'the projects are back');
  });

  t.test('retention keeps the newest; the schedule runs it on the same tick as the others', async t => {
    const update = await client.post('backup.update', { ...input, backupId, schedule: '*/2 * * * * *', enabled: true });
    t.equal(update.status, 200, JSON.stringify(update.body));
    const before = (await client.get('backup.one', { backupId })).body.lastRunAt as string;
    const fired = await waitFor(
      'the scheduled web-server backup ran',
      async () => {
        const one = (await client.get('backup.one', { backupId })).body;
        return one.lastRunAt !== before ? one : undefined;
      },
      { timeout: 60_000, interval: 500 },
    );
    await client.post('backup.update', { ...input, backupId, enabled: false });
    t.equal(fired.lastError, null, 'it succeeded');
    // A run may still be writing as it is disabled: wait for the retention of the last one.
    const kept = await waitFor(
      'retention kept one file',
      async () => {
        const list = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: 'instance/' })).body as { Path: string }[];
        return list.length === 1 ? list : undefined;
      },
      { timeout: 30_000, interval: 500 },
    );
    t.not(kept[0]!.Path, files[0]!.Path, 'the older archive was deleted, the newer kept');
  });
});

t.test('409 while the operator has not set the passphrase', async t => {
  const s3 = await startS3TestServer(t, [BUCKET]);
  const first = await startTestServer({ jobs: false, backupPassphrase: PASSPHRASE });
  let current = first;
  t.teardown(() => current.destroy());
  const { client, apiKey } = await signUpAdmin(first);
  const dest = (await client.post('destination.create', { name: 'own', endpoint: s3.endpoint, region: s3.region, bucket: BUCKET, accessKey: s3.accessKey, secretAccessKey: s3.secretAccessKey })).body;
  const input = { schedule: '0 3 * * *', prefix: 'instance', destinationId: dest.destinationId, database: 'berth', databaseType: 'web-server' };
  const made = await client.post('backup.create', input);
  t.equal(made.status, 200, JSON.stringify(made.body));
  // The operator drops the passphrase: the backup made before stays, but neither it nor a new one runs.
  current = await first.restart({ backupPassphrase: undefined });
  const after = new Client(current.url, { apiKey });
  const refused = await after.post('backup.create', input);
  t.equal(refused.status, 409, JSON.stringify(refused.body));
  t.match(refused.body, { code: 'CONFLICT', message: /backupPassphrase.*BERTH_BACKUP_PASSPHRASE/ }, 'it says what to set');
  const run = await after.post('backup.manualBackupWebServer', { backupId: made.body.backupId });
  t.equal(run.status, 409, 'nor is one run');
  t.match(run.body.message, /backupPassphrase/);
  t.same((await after.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: '' })).body, [], 'nothing was written');
});
