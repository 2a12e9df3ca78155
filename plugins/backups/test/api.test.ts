// backup.* and destination.* through both API variants and across organizations, and the
// kinds this machine cannot run (mongo: its backup is defined through the API; no mongod here).
import t from 'tap';
import { startTestServer, signUpAdmin, otherOrganization, startS3TestServer, Client } from '@berth/core/testing';

t.test('both variants, organizations isolated, a removed database takes its backups', async t => {
  const s3 = await startS3TestServer(t, ['older']);
  const server = await startTestServer();
  t.teardown(() => server.destroy());
  const { client, token, userId } = await signUpAdmin(server);

  // The older variant: Bearer token, a destination body without provider, additionalFlags or serverId.
  const older = new Client(server.url, { token });
  const body = { name: 'older', endpoint: s3.endpoint, region: s3.region, bucket: 'older', accessKey: s3.accessKey, secretAccessKey: s3.secretAccessKey };
  t.equal((await older.post('destination.testConnection', body)).body, true, 'the older body tests against S3-compatible storage');
  const dest = await older.post('destination.create', body);
  t.equal(dest.status, 200, JSON.stringify(dest.body));
  t.match(dest.body, { provider: null, additionalFlags: null });
  const trpc = await client.trpc('query', 'destination.one', { destinationId: dest.body.destinationId });
  t.match(trpc.body, { result: { data: { json: { destinationId: dest.body.destinationId, name: 'older' } } } }, 'the tRPC form answers it too');

  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Docs' });
  const mongo = await client.post('mongo.create', { name: 'docs', environmentId: environment.environmentId, databaseUser: 'docs', databasePassword: 'Mongo-pass_1' });
  t.equal(mongo.status, 200, JSON.stringify(mongo.body));
  const badPrefix = await client.post('backup.create', {
    schedule: '0 3 * * *',
    prefix: '../escape',
    destinationId: dest.body.destinationId,
    database: 'docs',
    databaseType: 'mongo',
    mongoId: mongo.body.mongoId,
  });
  t.match(badPrefix.body, { code: 'BAD_REQUEST', issues: [{ path: ['prefix'] }] }, 'a prefix cannot climb out of its folder');
  const missingId = await client.post('backup.create', { schedule: '0 3 * * *', prefix: 'docs', destinationId: dest.body.destinationId, database: 'docs', databaseType: 'mongo' });
  t.match(missingId.body, { code: 'BAD_REQUEST', issues: [{ path: ['mongoId'] }] }, "the kind's id field is required, and named");
  const backup = await older.post('backup.create', {
    schedule: '0 3 * * *',
    prefix: 'docs',
    destinationId: dest.body.destinationId,
    database: 'docs',
    databaseType: 'mongo',
    mongoId: mongo.body.mongoId,
  });
  t.equal(backup.status, 200, JSON.stringify(backup.body));
  t.match(backup.body, { databaseType: 'mongo', mongoId: mongo.body.mongoId, postgresId: null, enabled: null, keepLatestCount: null, encrypted: false });
  const one = (await client.get('backup.one', { backupId: backup.body.backupId })).body;
  t.match(
    one,
    {
      mongo: { mongoId: mongo.body.mongoId, name: 'docs', appName: mongo.body.appName, databaseUser: 'docs', databasePassword: 'Mongo-pass_1', environmentId: environment.environmentId },
      postgres: null,
      mysql: null,
      mariadb: null,
      libsql: null,
      compose: null,
    },
    "backup.one joins its database's record under the kind's name, the other kinds null",
  );
  t.notOk('environment' in one.mongo, 'the record without its relations, as the peer joins it');
  t.match((await client.get('mongo.one', { mongoId: mongo.body.mongoId })).body.backups, [{ backupId: backup.body.backupId, prefix: 'docs' }], 'the database lists its backups');
  const wrongKind = await client.post('backup.manualBackupPostgres', { backupId: backup.body.backupId });
  t.match(wrongKind.body, { code: 'BAD_REQUEST', issues: [{ path: ['backupId'] }] }, 'a mongo backup is not run as postgres');
  const notRunning = await client.post('backup.manualBackupMongo', { backupId: backup.body.backupId });
  t.equal(notRunning.status, 400);
  t.match(notRunning.body.message, /is not running/, 'a database that was never deployed is a failed backup, saying why');

  const other = await otherOrganization(server, userId);
  t.equal((await other.client.get('destination.one', { destinationId: dest.body.destinationId })).status, 404, 'another organization sees no destination');
  t.equal((await other.client.get('backup.one', { backupId: backup.body.backupId })).status, 404, 'nor the backup');
  t.same((await other.client.get('destination.all')).body, []);
  t.equal((await other.client.get('backup.listBackupFiles', { destinationId: dest.body.destinationId, search: '' })).status, 404);
  // A serverId names one of the caller's servers, on a connection test as on create and update.
  const server1 = await client.post('server.create', { name: 'box', ipAddress: '192.0.2.40', port: 22, sshKeyId: null });
  t.equal(server1.status, 200, JSON.stringify(server1.body));
  t.equal((await client.post('destination.testConnection', { ...body, serverId: server1.body.serverId })).body, true, "the test with the organization's server");
  for (const op of ['destination.testConnection', 'destination.create']) {
    t.match(
      await other.client.post(op, { ...body, serverId: server1.body.serverId }),
      { status: 404, body: { message: `Server ${server1.body.serverId} not found` } },
      `${op}: another organization's server is not found`,
    );
  }
  const foreign = await other.client.post('backup.restoreBackup', {
    databaseId: mongo.body.mongoId,
    databaseType: 'mongo',
    databaseName: 'docs',
    backupFile: 'docs/x.dump.gz',
    destinationId: dest.body.destinationId,
  });
  t.equal(foreign.status, 404, "nor restore into another organization's database");

  t.equal((await client.post('mongo.remove', { mongoId: mongo.body.mongoId })).status, 200);
  t.equal((await client.get('backup.one', { backupId: backup.body.backupId })).status, 404, 'removing the database removed its backup');
  t.equal((await client.post('destination.remove', { destinationId: dest.body.destinationId })).status, 200);
  t.same((await client.get('destination.all')).body, []);
});
