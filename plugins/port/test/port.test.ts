// port.* through the real kernel and a real PostgreSQL database.
import t from 'tap';
import { startTestServer, signUpAdmin, otherOrganization, freePort, type Client } from '@berth/core/testing';

const start = () => startTestServer({ jobs: false });

/** A project's default environment and an application in it, through the API. */
async function makeApplication(client: Client, name: string) {
  const project = await client.post('project.create', { name: `Project ${name}` });
  if (project.status !== 200) throw new Error(`project.create: ${project.status} ${JSON.stringify(project.body)}`);
  const app = await client.post('application.create', { name, environmentId: project.body.environment.environmentId });
  if (app.status !== 200) throw new Error(`application.create: ${app.status} ${JSON.stringify(app.body)}`);
  return app.body as { applicationId: string; appName: string };
}

const fields = (body: { issues?: { path: (string | number)[] }[] }) => (body.issues ?? []).map(i => i.path.join('.'));

t.test('bad input is refused before the application is looked up, naming the field', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const good = { publishedPort: 8080, targetPort: 80, applicationId: 'no-such-app' };
  const bad = async (input: Record<string, unknown>, field: string, what: string) => {
    const res = await client.post('port.create', { ...good, ...input });
    t.equal(res.status, 400, `${what}: 400`);
    t.ok(fields(res.body).includes(field), `${what}: names ${field} (got ${fields(res.body).join(', ')})`);
  };
  await bad({ publishedPort: 0 }, 'publishedPort', 'port 0');
  await bad({ publishedPort: 65536 }, 'publishedPort', 'port 65536');
  await bad({ publishedPort: -1 }, 'publishedPort', 'a negative port');
  await bad({ publishedPort: 80.5 }, 'publishedPort', 'a fraction');
  await bad({ publishedPort: 'http' }, 'publishedPort', 'a word');
  await bad({ publishedPort: undefined }, 'publishedPort', 'no publishedPort');
  await bad({ targetPort: 0 }, 'targetPort', 'targetPort 0');
  await bad({ targetPort: 70000 }, 'targetPort', 'targetPort 70000');
  await bad({ targetPort: undefined }, 'targetPort', 'no targetPort');
  await bad({ publishMode: 'bridge' }, 'publishMode', 'an unknown publishMode');
  await bad({ protocol: 'sctp' }, 'protocol', 'an unknown protocol');
  await bad({ applicationId: '' }, 'applicationId', 'an empty applicationId');

  const both = await client.post('port.create', { ...good, publishedPort: 0, targetPort: 0 });
  t.same(fields(both.body).sort(), ['publishedPort', 'targetPort'], 'every problem at once');

  const missing = await client.post('port.create', good);
  t.equal(missing.status, 404, 'valid input for an unknown application');
  t.equal(missing.body.code, 'NOT_FOUND');
  t.equal((await client.get('port.one', { portId: 'nope' })).status, 404);
  t.equal((await client.post('port.update', { portId: 'nope', publishedPort: 81 })).status, 404);
  t.equal((await client.post('port.delete', { portId: 'nope' })).status, 404);
  const badUpdate = await client.post('port.update', { portId: 'nope', publishedPort: 99999 });
  t.equal(badUpdate.status, 400, 'update checks its input first');
  t.same(fields(badUpdate.body), ['publishedPort']);
});

t.test('ports of an application', async t => {
  const server = await start();
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);
  const web = await makeApplication(client, 'web');
  const api = await makeApplication(client, 'api');

  const created = await client.post('port.create', { publishedPort: 8080, targetPort: 80, applicationId: web.applicationId });
  t.equal(created.status, 200);
  t.same(created.body, { portId: created.body.portId, publishedPort: 8080, publishMode: 'ingress', targetPort: 80, protocol: 'tcp', applicationId: web.applicationId }, 'ingress and tcp by default');

  const dns = await client.post('port.create', { publishedPort: 5353, targetPort: 53, protocol: 'udp', publishMode: 'host', applicationId: web.applicationId });
  t.equal(dns.status, 200);
  t.match(dns.body, { publishedPort: 5353, targetPort: 53, protocol: 'udp', publishMode: 'host' });

  t.test('one answers a port, over REST and tRPC', async t => {
    const one = await client.get('port.one', { portId: created.body.portId });
    t.equal(one.status, 200);
    t.same(one.body, { ...created.body, application: { applicationId: created.body.applicationId } }, 'the port with its application, as the peer answers it');
    const trpc = await client.trpc('query', 'port.one', { portId: dns.body.portId });
    t.same(trpc.body.result.data.json, { ...dns.body, application: { applicationId: dns.body.applicationId } });
  });

  t.test('application.one lists the ports, oldest first', async t => {
    const listed = await makeApplication(client, 'listed');
    const ports = [];
    for (const publishedPort of [7100, 7099]) ports.push((await client.post('port.create', { publishedPort, targetPort: 80, applicationId: listed.applicationId })).body);
    const res = await client.get('application.one', { applicationId: listed.applicationId });
    t.equal(res.status, 200);
    t.same(res.body.ports, ports);
    t.same((await client.get('application.one', { applicationId: (await makeApplication(client, 'portless')).applicationId })).body.ports, []);
  });

  t.test('an ingress port has one owner on the host', async t => {
    const again = await client.post('port.create', { publishedPort: 8080, targetPort: 3000, applicationId: api.applicationId });
    t.equal(again.status, 409);
    t.equal(again.body.code, 'CONFLICT');
    t.match(again.body.message, /publishedPort 8080\/tcp/, 'the message names the port');
    const asHost = await client.post('port.create', { publishedPort: 8080, targetPort: 3000, publishMode: 'host', applicationId: api.applicationId });
    t.equal(asHost.status, 409, 'a host-mode port cannot take an ingress port either');
    const sameApp = await client.post('port.create', { publishedPort: 8080, targetPort: 81, applicationId: web.applicationId });
    t.equal(sameApp.status, 409, 'nor the same application twice');
    const udp = await client.post('port.create', { publishedPort: 8080, targetPort: 80, protocol: 'udp', applicationId: api.applicationId });
    t.equal(udp.status, 200, 'the same number over udp is another port');
    t.equal((await client.post('port.delete', { portId: udp.body.portId })).status, 200);
  });

  t.test('host-mode ports of different applications may share a number, not with ingress', async t => {
    const shared = await client.post('port.create', { publishedPort: 5353, targetPort: 53, protocol: 'udp', publishMode: 'host', applicationId: api.applicationId });
    t.equal(shared.status, 200, 'Swarm places the two tasks on different nodes');
    const twice = await client.post('port.create', { publishedPort: 5353, targetPort: 54, protocol: 'udp', publishMode: 'host', applicationId: web.applicationId });
    t.equal(twice.status, 409, 'one application cannot publish it twice');
    const ingress = await client.post('port.create', { publishedPort: 5353, targetPort: 53, protocol: 'udp', applicationId: (await makeApplication(client, 'third')).applicationId });
    t.equal(ingress.status, 409, "an ingress port cannot take a host-mode port's number");
    t.equal((await client.post('port.delete', { portId: shared.body.portId })).status, 200);
  });

  t.test('update changes what is given; the result must still be free', async t => {
    const made = (await client.post('port.create', { publishedPort: 9000, targetPort: 9000, applicationId: api.applicationId })).body;
    const moved = await client.post('port.update', { portId: made.portId, publishedPort: 9001 });
    t.equal(moved.status, 200);
    t.same(moved.body, { ...made, publishedPort: 9001 });
    const full = await client.post('port.update', { portId: made.portId, publishedPort: 9002, targetPort: 8000, publishMode: 'host', protocol: 'udp' });
    t.same(full.body, { ...made, publishedPort: 9002, targetPort: 8000, publishMode: 'host', protocol: 'udp' }, "the peer's form sends every field");
    const partial = await client.post('port.update', { portId: made.portId, publishedPort: 9002, targetPort: 8001 });
    t.equal(partial.status, 200, 'its own port is not a conflict');
    t.match(partial.body, { publishMode: 'host', protocol: 'udp' }, 'absent fields keep their values (no defaults on update)');
    const taken = await client.post('port.update', { portId: made.portId, publishedPort: 8080, protocol: 'tcp' });
    t.equal(taken.status, 409);
    t.match(taken.body.message, /publishedPort 8080\/tcp/);
    t.match((await client.get('port.one', { portId: made.portId })).body, { publishedPort: 9002, protocol: 'udp' }, 'a refused update changes nothing');
    const bad = await client.post('port.update', { portId: made.portId, targetPort: 0, protocol: 'icmp' });
    t.equal(bad.status, 400);
    t.same(fields(bad.body).sort(), ['protocol', 'targetPort']);
  });

  t.test("another organization sees none of it, and shares the host's ports", async t => {
    const other = await otherOrganization(server, userId);
    for (const p of [created.body, dns.body]) {
      t.equal((await other.client.get('port.one', { portId: p.portId })).status, 404, `one ${p.publishedPort}`);
      t.equal((await other.client.post('port.update', { portId: p.portId, publishedPort: 7000 })).status, 404, `update ${p.publishedPort}`);
      t.equal((await other.client.post('port.delete', { portId: p.portId })).status, 404, `delete ${p.publishedPort}`);
    }
    const attach = await other.client.post('port.create', { publishedPort: 7001, targetPort: 80, applicationId: web.applicationId });
    t.equal(attach.status, 404, 'cannot publish a port of an application it does not own');
    t.equal(attach.body.code, 'NOT_FOUND');
    const own = await makeApplication(other.client, 'own');
    const clash = await other.client.post('port.create', { publishedPort: 8080, targetPort: 80, applicationId: own.applicationId });
    t.equal(clash.status, 409, "the first organization's ingress port is taken on this host");
    t.match(clash.body.message, /publishedPort 8080\/tcp is already published on this host/);
    t.notMatch(clash.body.message, new RegExp(web.applicationId), 'without saying whose');
    t.equal((await client.get('port.one', { portId: created.body.portId })).body.publishedPort, 8080, 'nothing changed');
  });

  t.test('delete answers the port as it was; its number is free again', async t => {
    const made = (await client.post('port.create', { publishedPort: 6000, targetPort: 6000, applicationId: web.applicationId })).body;
    const res = await client.post('port.delete', { portId: made.portId });
    t.equal(res.status, 200);
    t.same(res.body, made);
    t.equal((await client.get('port.one', { portId: made.portId })).status, 404);
    t.equal((await client.post('port.delete', { portId: made.portId })).status, 404);
    t.equal((await client.post('port.create', { publishedPort: 6000, targetPort: 6000, applicationId: api.applicationId })).status, 200);
  });

  t.test('deleting the application deletes its ports and frees them', async t => {
    const doomed = await makeApplication(client, 'doomed');
    const made = (await client.post('port.create', { publishedPort: 6100, targetPort: 80, applicationId: doomed.applicationId })).body;
    t.equal((await client.post('application.delete', { applicationId: doomed.applicationId })).status, 200);
    t.equal((await client.get('port.one', { portId: made.portId })).status, 404);
    t.equal((await client.post('port.create', { publishedPort: 6100, targetPort: 80, applicationId: web.applicationId })).status, 200);
  });
});

t.test("Berth's own API port is never published for an application", async t => {
  const port = await freePort();
  const server = await startTestServer({ jobs: false, port });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const app = await makeApplication(client, 'web');
  const res = await client.post('port.create', { publishedPort: port, targetPort: 80, applicationId: app.applicationId });
  t.equal(res.status, 409);
  t.match(res.body.message, new RegExp(`publishedPort ${port}/tcp is held by Berth`));
  t.equal((await client.post('port.create', { publishedPort: port === 65535 ? port - 1 : port + 1, targetPort: 80, applicationId: app.applicationId })).status, 200);
  t.equal((await client.post('port.create', { publishedPort: port, protocol: 'udp', targetPort: 80, applicationId: app.applicationId })).status, 200, 'its number over udp is free');
});
