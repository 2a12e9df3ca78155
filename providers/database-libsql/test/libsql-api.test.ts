// libsql.* live, on the stand-in image (test/stand-ins) and the real engine: create (answers true,
// as the peer's) → saveExternalPorts with the three ports (queues the deploy) → a real query through
// @libsql/client on the external port, the gRPC and admin ports published → stop (refused) → start
// (data kept) → update of the password and deploy (old refused, new works) → the peer's refusals →
// remove (no service, no volume). The OpenAPI document serves the peer's procedures and not the kit's
// changePassword, search and saveExternalPort.
import t from 'tap';
import net from 'node:net';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, waitFor, freePort, removeServiceAndVolume, engineGone, runFinished, TEST_LIBSQL_IMAGE } from '@berth/core/testing';
import { dataVolumeOf } from '@berth/plugin-workloads';
import { basicClient } from './basic-client.ts';

t.setTimeout(600_000);
const docker = new Docker();

const tcpOpen = (port: number) =>
  new Promise<void>((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve();
    });
    socket.on('error', reject);
  });

t.test('libsql on the real engine', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Edge' });
  const run = (op: string, input: Record<string, unknown>) => runFinished(client, op, input);

  t.test("the peer's procedures are served, the kit's it lacks are not", async t => {
    const doc = (await client.get('settings.getOpenApiDocument')).body as { paths: Record<string, unknown> };
    const libsql = Object.keys(doc.paths)
      .filter(p => p.startsWith('/libsql.'))
      .map(p => p.slice(1))
      .sort();
    t.same(
      libsql,
      ['create', 'one', 'start', 'stop', 'saveExternalPorts', 'deploy', 'changeStatus', 'remove', 'saveEnvironment', 'reload', 'update', 'move', 'rebuild', 'readLogs'].map(p => `libsql.${p}`).sort(),
      "exactly the peer's libsql router",
    );
    t.ok(doc.paths['/backup.manualBackupLibsql'], 'and its manual backup');
    t.ok(doc.paths['/postgres.changePassword'] && doc.paths['/postgres.search'] && doc.paths['/postgres.saveExternalPort'], 'the other kinds keep theirs');
    t.equal((await client.post('libsql.changePassword', { libsqlId: 'x', password: 'y' })).status, 404, 'libsql.changePassword does not exist');
    t.equal((await client.get('libsql.search', {})).status, 404, 'libsql.search does not exist');
  });

  t.test('create → saveExternalPorts → query → stop → start → new password → remove', async t => {
    const base = { environmentId: environment.environmentId, dockerImage: TEST_LIBSQL_IMAGE, databaseUser: 'edge', sqldNode: 'primary', sqldPrimaryUrl: null, enableNamespaces: false };
    const replica = await client.post('libsql.create', { ...base, name: 'replica', databasePassword: 'Edge-pass_1', sqldNode: 'replica' });
    t.match(replica, { status: 400, body: { issues: [{ path: ['sqldPrimaryUrl'], message: /required when sqldNode is 'replica'/ }] } }, 'a replica needs its primary');
    const badPassword = await client.post('libsql.create', { ...base, name: 'bad', databasePassword: "it's" });
    t.equal(badPassword.status, 400, "the peer's password rule");
    for (const url of ['file:///etc/passwd', 'primary:5001', `http://${'a'.repeat(2048)}`]) {
      const badUrl = await client.post('libsql.create', { ...base, name: 'bad url', databasePassword: 'Edge-pass_1', sqldNode: 'replica', sqldPrimaryUrl: url });
      t.match(
        badUrl,
        { status: 400, body: { issues: [{ path: ['sqldPrimaryUrl'], message: /^sqldPrimaryUrl: / }] } },
        `the primary's URL is a bounded http(s), libsql or ws(s) URL: ${url.slice(0, 30)}`,
      );
    }

    const password = 'Edge-pass_1#x';
    const created = await client.post('libsql.create', { ...base, name: 'edge main', databasePassword: password });
    t.same(created.body, true, "create answers true, as the peer's");
    const listed = (await client.get('environment.one', { environmentId: environment.environmentId })).body.libsql as { libsqlId: string; name: string }[];
    const libsqlId = listed.find(l => l.name === 'edge main')!.libsqlId;
    const one = (await client.get('libsql.one', { libsqlId })).body;
    t.match(one, {
      libsqlId,
      databaseUser: 'edge',
      databasePassword: password,
      sqldNode: 'primary',
      sqldPrimaryUrl: null,
      enableNamespaces: false,
      externalPort: null,
      externalGRPCPort: null,
      externalAdminPort: null,
    });
    const appName = one.appName as string;
    t.teardown(() => removeServiceAndVolume(appName));

    const allNull = await client.post('libsql.saveExternalPorts', { libsqlId, externalPort: null, externalGRPCPort: null, externalAdminPort: null });
    t.match(allNull, { status: 400, body: { issues: [{ path: ['externalPort'] }] } }, 'one port at least, as the peer asks');
    const none = await client.post('libsql.saveExternalPorts', { libsqlId });
    t.match(none, { status: 400, body: { issues: [{ path: ['externalPort'] }] } }, 'no port given: refused (the peer fails with nothing to set, before its deploy)');
    const oneNull = await run('libsql.saveExternalPorts', { libsqlId, externalPort: null });
    t.equal(oneNull.status, 'done', oneNull.errorMessage ?? 'one port given as null is accepted and deploys, as the peer does (it refuses only when all three are null)');
    const [http, grpc, admin] = [await freePort(), await freePort(), await freePort()];
    const twice = await client.post('libsql.saveExternalPorts', { libsqlId, externalPort: http, externalGRPCPort: http });
    t.match(twice, { status: 400, body: { issues: [{ path: ['externalGRPCPort'] }] } }, 'one host port for two of its ports is refused');

    const saved = await run('libsql.saveExternalPorts', { libsqlId, externalPort: http, externalGRPCPort: grpc, externalAdminPort: admin });
    t.equal(saved.status, 'done', saved.errorMessage ?? 'saveExternalPorts deploys, as the peer does');
    t.match((await client.get('libsql.one', { libsqlId })).body, {
      applicationStatus: 'done',
      externalPort: http,
      externalGRPCPort: grpc,
      externalAdminPort: admin,
      externalConnectionUrl: new RegExp(`^http://edge:.*:${http}$`),
    });
    const spec = (await docker.getService(appName).inspect()).Spec;
    t.same(
      (spec.EndpointSpec?.Ports ?? []).map((p: { TargetPort: number; PublishedPort: number }) => [p.TargetPort, p.PublishedPort]).sort(),
      [
        [5000, admin],
        [5001, grpc],
        [8080, http],
      ],
      'http, gRPC and admin published on their host ports',
    );
    t.same(spec.TaskTemplate.ContainerSpec.Args.slice(0, 2), ['--db-path', '/var/lib/sqld/iku.db'], "the peer's sqld command line");

    const query = async (pass: string) => {
      const db = basicClient(`http://edge:${encodeURIComponent(pass)}@127.0.0.1:${http}`);
      try {
        await db.execute('CREATE TABLE IF NOT EXISTS probe (v TEXT)');
        return (await db.execute('SELECT v FROM probe')).rows.map(r => r.v);
      } finally {
        db.close();
      }
    };
    const connected = (pass: string) => waitFor(`libsql answering on ${http}`, () => query(pass));
    t.same(await connected(password), [], 'a new database: an empty table');
    const db = basicClient(`http://edge:${encodeURIComponent(password)}@127.0.0.1:${http}`);
    await db.batch([{ sql: 'INSERT INTO probe (v) VALUES (?)', args: ['kept-row'] }], 'write');
    db.close();
    t.same(await query(password), ['kept-row'], 'written and read with @libsql/client through the external port');
    t.ok(await waitFor('the gRPC port', () => tcpOpen(grpc).then(() => true)), 'the gRPC port is published');
    t.equal((await waitFor('the admin port', () => fetch(`http://127.0.0.1:${admin}/health`))).status, 200, 'the admin port answers');

    const stopped = await run('libsql.stop', { libsqlId });
    t.equal(stopped.status, 'done', stopped.errorMessage ?? '');
    t.equal((await client.get('libsql.one', { libsqlId })).body.applicationStatus, 'idle');
    await t.rejects(query(password), { cause: { code: 'ECONNREFUSED' } }, 'connection refused while stopped');
    const started = await run('libsql.start', { libsqlId });
    t.equal(started.status, 'done', started.errorMessage ?? '');
    t.same(await connected(password), ['kept-row'], 'the data survived stop/start');

    // No changePassword: the password is the server's environment, changed with update and a deploy.
    const newPassword = 'New-pass_2#z';
    t.same((await client.post('libsql.update', { libsqlId, databasePassword: newPassword })).body, true);
    const redeployed = await run('libsql.deploy', { libsqlId });
    t.equal(redeployed.status, 'done', redeployed.errorMessage ?? '');
    t.notOk((await client.get('deployment.readLogs', { deploymentId: redeployed.deploymentId })).body.includes(newPassword), 'the password never reaches the log');
    t.same(await connected(newPassword), ['kept-row'], 'the new password works');
    await t.rejects(query(password), { message: /401/ }, 'the old one is refused');

    const grpcOnReplica = await client.post('libsql.update', { libsqlId, sqldNode: 'replica', sqldPrimaryUrl: 'http://primary:5001' });
    t.match(grpcOnReplica, { status: 400, body: { issues: [{ path: ['externalGRPCPort'] }] } }, 'a replica publishes no gRPC port');

    const removed = await client.post('libsql.remove', { libsqlId });
    t.equal(removed.status, 200);
    t.match(removed.body, { libsqlId, appName });
    t.equal(await engineGone(docker.getService(appName).inspect()), 'gone', 'no service');
    t.equal(await engineGone(docker.getVolume(dataVolumeOf('libsql', libsqlId)).inspect()), 'gone', 'no volume');
    t.equal((await client.get('libsql.one', { libsqlId })).status, 404);
  });
});
