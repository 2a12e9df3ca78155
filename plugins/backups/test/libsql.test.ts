// libSQL (backup.manualBackupLibsql, databaseType "libsql") on the stand-in image (test/stand-ins):
// rows → backup (the peer's tar of the database directory, proven in a throwaway libsql: its tables
// and exact row counts recorded) → change and drop → restore (the service is stopped, the archive
// unpacked into its volume, the service started again) → the rows are back exactly; a file that is
// not an archive of the database is refused and the current data kept.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { startTestServer, signUpAdmin, deploymentFinished, removeServiceAndVolume, freePort, runFinished, waitFor, TEST_LIBSQL_IMAGE } from '@berth/core/testing';

t.setTimeout(600_000);
const USER = 'edge';
const PASSWORD = 'Edge-pass_1#x';

t.test('libsql backups restore their rows', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Edge' });
  const dest = (await client.post('destination.create', { name: 'disk', provider: 'local', bucket: 'libsql', endpoint: '', region: '', accessKey: '', secretAccessKey: '', additionalFlags: null }))
    .body;
  const created = await client.post('libsql.create', {
    name: 'edge',
    environmentId: environment.environmentId,
    dockerImage: TEST_LIBSQL_IMAGE,
    databaseUser: USER,
    databasePassword: PASSWORD,
    sqldNode: 'primary',
    sqldPrimaryUrl: null,
    enableNamespaces: false,
  });
  t.same(created.body, true, JSON.stringify(created.body));
  const { libsqlId, appName } = ((await client.get('environment.one', { environmentId: environment.environmentId })).body.libsql as { libsqlId: string; appName: string }[])[0]!;
  t.teardown(() => removeServiceAndVolume(appName));
  const port = await freePort();
  t.equal((await runFinished(client, 'libsql.saveExternalPorts', { libsqlId, externalPort: port })).status, 'done');

  /** Statements through sqld's Hrana pipeline on the external port; answers the last one's rows as JSON text. */
  const sql = async (...statements: string[]) => {
    const res = await fetch(`http://127.0.0.1:${port}/v2/pipeline`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ baton: null, requests: [...statements.map(s => ({ type: 'execute', stmt: { sql: s } })), { type: 'close' }] }),
    });
    const body = (await res.json()) as { results: { type: string; error?: { message: string }; response?: { result: { rows: { value?: unknown }[][] } } }[] };
    const failed = body.results.find(r => r.type === 'error');
    if (res.status !== 200 || failed) throw new Error(`${res.status} ${failed?.error?.message ?? ''}`);
    return JSON.stringify(body.results.at(-2)!.response!.result.rows.map(r => r.map(v => v.value ?? null)));
  };
  await waitFor('libsql answering', () => sql('SELECT 1').then(() => true));
  await sql(
    'CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)',
    "INSERT INTO orders (item) VALUES ('one'), ('two'), ('three ünïcode')",
    'CREATE TABLE "odd "" name" (x)',
    'INSERT INTO "odd "" name" VALUES (1), (2)',
  );
  const original = await sql('SELECT id, item FROM orders ORDER BY id');

  const backup = (await client.post('backup.create', { schedule: '0 3 * * *', prefix: 'edge', destinationId: dest.destinationId, database: 'iku.db', databaseType: 'libsql', libsqlId })).body;
  t.match(backup, { databaseType: 'libsql', libsqlId });
  const ran = await client.post('backup.manualBackupLibsql', { backupId: backup.backupId });
  t.equal(ran.body, true, JSON.stringify(ran.body));
  const [file] = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: 'edge/' })).body as { Path: string; verified: boolean; verification: string }[];
  t.match(file, { verified: true }, 'the file is restored into a throwaway libsql once');
  t.match(file, { verification: /^orders\t3$/m }, "the copy's tables and exact row counts are recorded");
  t.match(file, { verification: /^odd " name\t2$/m }, 'a name with a quote and spaces is counted too');

  await sql("UPDATE orders SET item = 'changed'", 'DROP TABLE "odd "" name"', 'CREATE TABLE later (x)');
  const queued = await client.post('backup.restoreBackup', { databaseId: libsqlId, databaseType: 'libsql', databaseName: 'iku.db', backupFile: file!.Path, destinationId: dest.destinationId });
  const restored = await deploymentFinished(client, queued.body.deploymentId);
  t.equal(restored.status, 'done', restored.errorMessage ?? '');
  const back = await waitFor('libsql answering after the restore', () => sql('SELECT id, item FROM orders ORDER BY id').catch(() => undefined));
  t.equal(back, original, 'the rows are back exactly');
  t.equal(await sql('SELECT count(*) FROM "odd "" name"'), '[["2"]]', 'the dropped table is back');
  await t.rejects(sql('SELECT * FROM later'), /no such table/, 'what was created after the backup is gone');

  t.test('a file that is not an archive of the database is refused and the data is kept', async t => {
    const bad = (await client.post('backup.create', { schedule: '0 3 * * *', enabled: false, prefix: 'bad', destinationId: dest.destinationId, database: 'iku.db', databaseType: 'libsql', libsqlId }))
      .body;
    t.equal((await client.post('backup.manualBackupLibsql', { backupId: bad.backupId })).body, true);
    const [written] = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: 'bad/' })).body as { Path: string }[];
    // A whole gzip stream with its checksum recorded anew is out of reach: the file is replaced and
    // its restore must be refused by the checksum or by tar, never by losing the current data.
    writeFileSync(path.join(server.dataDir, 'backups', 'libsql', written!.Path), gzipSync(Buffer.from('not the archive that was written')));
    const queued = await client.post('backup.restoreBackup', { databaseId: libsqlId, databaseType: 'libsql', databaseName: 'iku.db', backupFile: written!.Path, destinationId: dest.destinationId });
    const failed = await deploymentFinished(client, queued.body.deploymentId);
    t.equal(failed.status, 'error', 'the restore fails');
    const after = await waitFor('libsql answering after the refused restore', () => sql('SELECT id, item FROM orders ORDER BY id').catch(() => undefined));
    t.equal(after, original, 'the current rows are kept');
  });
});
