// A port of the host is one port, whoever publishes it: an application's published port and
// a database's external port never take the same one (either order), across organizations too.
import t from 'tap';
import { startTestServer, signUpAdmin, otherOrganization } from '@berth/core/testing';

t.test("applications and databases share the host's ports without clashing", async t => {
  const server = await startTestServer({ jobs: false });
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Ports' });
  const app = (await client.post('application.create', { name: 'web', environmentId: environment.environmentId })).body;
  const pg = (await client.post('postgres.create', { name: 'db', environmentId: environment.environmentId, databaseName: 'd', databaseUser: 'u', databasePassword: 'p' })).body;
  const redis = (await client.post('redis.create', { name: 'cache', environmentId: environment.environmentId, databasePassword: 'p' })).body;

  t.equal((await client.post('port.create', { applicationId: app.applicationId, publishedPort: 25432, targetPort: 80, publishMode: 'host', protocol: 'tcp' })).status, 200);
  const taken = await client.post('postgres.saveExternalPort', { postgresId: pg.postgresId, externalPort: 25432 });
  t.equal(taken.status, 409, "a database cannot take an application's port");
  t.match(taken.body.message, /25432/);
  t.equal((await client.post('postgres.saveExternalPort', { postgresId: pg.postgresId, externalPort: 25433 })).status, 200);
  const back = await client.post('port.create', { applicationId: app.applicationId, publishedPort: 25433, targetPort: 80, publishMode: 'host', protocol: 'tcp' });
  t.equal(back.status, 409, "nor an application a database's");
  t.match(back.body.message, /25433/);
  t.equal((await client.post('port.create', { applicationId: app.applicationId, publishedPort: 25433, targetPort: 80, publishMode: 'host', protocol: 'udp' })).status, 200, 'udp is another port');
  t.equal((await client.post('redis.saveExternalPort', { redisId: redis.redisId, externalPort: 25433 })).status, 409, 'nor another kind of database');
  t.equal((await client.post('postgres.saveExternalPort', { postgresId: pg.postgresId, externalPort: 25433 })).status, 200, 'saving its own port again is fine');

  const other = await otherOrganization(server, userId);
  const {
    body: { environment: theirs },
  } = await other.client.post('project.create', { name: 'Theirs' });
  const theirApp = (await other.client.post('application.create', { name: 'web', environmentId: theirs.environmentId })).body;
  const cross = await other.client.post('port.create', { applicationId: theirApp.applicationId, publishedPort: 25433, targetPort: 80, publishMode: 'host', protocol: 'tcp' });
  t.equal(cross.status, 409, 'the host is shared across organizations');
  t.notMatch(JSON.stringify(cross.body), new RegExp(pg.postgresId), "without naming the other organization's record");

  t.equal((await client.post('postgres.saveExternalPort', { postgresId: pg.postgresId, externalPort: null })).status, 200);
  t.equal(
    (await other.client.post('port.create', { applicationId: theirApp.applicationId, publishedPort: 25433, targetPort: 80, publishMode: 'host', protocol: 'tcp' })).status,
    200,
    'a released port is free',
  );
});
