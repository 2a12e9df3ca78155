// Workloads on a server, for real: a kit host (its own address, sshd and dockerd) is added as a
// user would (sshKey.create with its key, server.create with its address, login and the host key's
// fingerprint pinned up front), and an
// application (an image), a PostgreSQL database and compose stacks of both types created with its
// serverId deploy on that host's engine — their images copied from the local engine by
// save | load, since nothing can be pulled here — answer on its address, log, stop and are
// removed there; nothing of them ever appears on the local engine. An application from a git
// provider (Bitbucket, on loopback) is cloned here and built there: its token is found on no file
// and in no process of that host. A serverId nobody keeps, or
// another organization's (a real second organization naming it), is 404.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import Docker from 'dockerode';
import pg from 'pg';
import {
  canRun,
  startTestServer,
  signUpAdmin,
  otherOrganization,
  runFinished,
  deploymentFinished,
  waitFor,
  freePort,
  makeGitRepo,
  TEST_BASE_IMAGE,
  TEST_POSTGRES_IMAGE,
  TEST_STATIC_IMAGE,
  TEST_CADDY_IMAGE,
} from '@berth/core/testing';
import { inHost, remoteHostsMissing, sharedRemoteHosts } from './kit/remote-hosts.ts';
import { startFakeBitbucket } from '../providers/git-bitbucket/test/bitbucket-api.ts';

t.setTimeout(1_200_000);

if (canRun(t, 'remote-hosts', remoteHostsMissing())) {
  const {
    hosts: [h],
  } = await sharedRemoteHosts(1);
  const host = h!;
  const local = new Docker();
  const remote = new Docker({ socketPath: host.socket });

  // The proxy is Caddy: a domain of a workload on the server is routed by the server's own proxy.
  const PROXY = `berth-test-proxy-${process.pid}`;
  const proxyHttpPort = await freePort();
  const bb = await startFakeBitbucket(t);
  const server = await startTestServer({
    deploySettleSeconds: 1,
    proxy: 'caddy',
    proxyImage: TEST_CADDY_IMAGE,
    proxyHttpPort,
    proxyHttpsPort: await freePort(),
    providers: { proxy: { caddy: { options: { serviceName: PROXY } } }, git: { bitbucket: { options: { apiUrl: bb.apiUrl, webUrl: bb.webUrl } } } },
    hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: false },
  });
  t.teardown(async () => {
    await server.destroy();
    for (const docker of [local, remote])
      await docker
        .getService(PROXY)
        .remove()
        .catch(() => undefined);
  });
  const { client, userId } = await signUpAdmin(server);
  const key = await client.post('sshKey.create', { name: 'kit host', privateKey: host.privateKey, publicKey: host.publicKey });
  if (key.status !== 200) throw new Error(`sshKey.create: ${key.status} ${JSON.stringify(key.body)}`);
  const added = await client.post('server.create', {
    name: 'kit host',
    ipAddress: host.address,
    port: 22,
    username: host.user,
    sshKeyId: key.body.sshKeyId,
    hostKeyFingerprint: host.hostKeyFingerprint,
  });
  if (added.status !== 200) throw new Error(`server.create: ${added.status} ${JSON.stringify(added.body)}`);
  const SERVER = added.body.serverId as string;
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'On a server' });
  const environmentId = environment.environmentId as string;

  /** Services and containers of a record (its berth.id label) on an engine. */
  const footprint = async (docker: Docker, id: string) => ({
    services: (await docker.listServices({ filters: { label: [`berth.id=${id}`] } })).length,
    containers: (await docker.listContainers({ all: true, filters: { label: [`berth.id=${id}`] } })).length,
  });
  const nothingLocal = async (t: Pick<typeof import('tap').default, 'same'>, id: string) => t.same(await footprint(local, id), { services: 0, containers: 0 }, 'nothing of it on the local engine');
  const hasImage = (docker: Docker, image: string) =>
    docker
      .getImage(image)
      .inspect()
      .then(
        () => true,
        () => false,
      );
  const get = async (port: number) => {
    try {
      const res = await fetch(`http://${host.address}:${port}/`, { signal: AbortSignal.timeout(2000) });
      return `${res.status} ${await res.text()}`; // any answer: the static image serves an empty directory (404)
    } catch {
      return undefined;
    }
  };
  const served = (port: number, expect: RegExp) =>
    waitFor(
      `${host.address}:${port} serving ${expect}`,
      async () => {
        const body = await get(port);
        return body !== undefined && expect.test(body) ? body : undefined;
      },
      { timeout: 60_000, interval: 250 },
    );
  const unreachable = (port: number) => waitFor(`nothing on ${host.address}:${port}`, async () => (await get(port)) === undefined, { timeout: 60_000, interval: 250 });

  t.test('a serverId no server record has is 404; a workload stays on its host', async t => {
    const refused = await client.post('application.create', { name: 'nowhere', environmentId, serverId: 'srv-none' });
    t.equal(refused.status, 404, JSON.stringify(refused.body));
    t.match(refused.body.message, 'Server srv-none not found');
    const db = await client.post('postgres.create', { name: 'nowhere', environmentId, serverId: 'srv-none', databaseName: 'shop', databaseUser: 'shop', databasePassword: 'Pg-pass_1' });
    t.equal(db.status, 404, JSON.stringify(db.body));
    t.equal((await client.post('compose.create', { name: 'nowhere', environmentId, serverId: 'srv-none', composeFile: 'services: {}\n' })).status, 404);
    // Another organization (its owner is this admin too, acting in it) names this one's server: 404
    // for each kind, as for a server nobody keeps; the same calls of the server's own organization
    // pass (the positive control: the tests below make these workloads on it).
    const other = await otherOrganization(server, userId);
    const theirProject = await other.client.post('project.create', { name: 'theirs' });
    t.equal(theirProject.status, 200, JSON.stringify(theirProject.body));
    const theirEnvironment = theirProject.body.environment.environmentId as string;
    const foreign = [
      await other.client.post('application.create', { name: 'theirs', environmentId: theirEnvironment, serverId: SERVER }),
      await other.client.post('postgres.create', { name: 'theirs', environmentId: theirEnvironment, serverId: SERVER, databaseName: 'shop', databaseUser: 'shop', databasePassword: 'Pg-pass_1' }),
      await other.client.post('compose.create', { name: 'theirs', environmentId: theirEnvironment, serverId: SERVER, composeFile: 'services: {}\n' }),
    ];
    t.same(
      foreign.map(r => r.status),
      [404, 404, 404],
      `another organization's server is not found: ${foreign.map(r => JSON.stringify(r.body)).join(' ')}`,
    );
    t.match(foreign[0]!.body.message, `Server ${SERVER} not found`, 'the same answer as for a server nobody keeps');
    const mine = await client.post('application.create', { name: 'mine', environmentId, serverId: SERVER });
    t.equal(mine.status, 200, `the server's own organization makes the same call: ${JSON.stringify(mine.body)}`);
    t.equal((await client.post('application.delete', { applicationId: mine.body.applicationId })).status, 200);
    const made = await client.post('application.create', { name: 'here', environmentId });
    t.equal(made.status, 200);
    const moved = await client.post('application.update', { applicationId: made.body.applicationId, serverId: SERVER });
    t.equal(moved.status, 400, 'moving a workload to another host by update is refused');
    t.match(JSON.stringify(moved.body), /serverId/, 'naming the field');
    t.equal((await client.post('application.delete', { applicationId: made.body.applicationId })).status, 200);
  });

  t.test('an application (an image) runs on the server: its engine prepared, the image copied, logs, stop, delete', async t => {
    await remote
      .getImage(TEST_STATIC_IMAGE)
      .remove({ force: true })
      .catch(() => undefined);
    const created = await client.post('application.create', { name: 'web', environmentId, serverId: SERVER });
    t.equal(created.status, 200, JSON.stringify(created.body));
    t.equal(created.body.serverId, SERVER, 'the record names its server');
    const { applicationId, appName } = created.body as { applicationId: string; appName: string };
    t.teardown(() =>
      remote
        .getService(appName)
        .remove()
        .catch(() => undefined),
    );
    await client.post('application.saveDockerProvider', { applicationId, dockerImage: TEST_STATIC_IMAGE });
    const port = await freePort();
    t.equal((await client.post('port.create', { applicationId, publishedPort: port, targetPort: 80, publishMode: 'host', protocol: 'tcp' })).status, 200);
    // A file mount: its file is written on the server, where the engine binds it.
    const page = await client.post('mounts.create', { serviceId: applicationId, type: 'file', content: 'from a file mount on the server\n', mountPath: '/www/index.html' });
    t.equal(page.status, 200, JSON.stringify(page.body));

    const done = await runFinished(client, 'application.deploy', { applicationId });
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
    t.match(log, `copying it from Berth's own engine`, 'the log says the image was copied');
    const onServer = `/home/${host.user}/.berth/files/${appName}/${page.body.filePath}`;
    t.equal((await inHost(host, ['cat', onServer])).stdout, 'from a file mount on the server\n', "the file is written on the server, in the login's home");
    t.equal(existsSync(path.join(server.dataDir, 'applications', appName, 'files', page.body.filePath)), false, 'not here');
    t.ok(await hasImage(remote, TEST_STATIC_IMAGE), 'the image is on the server now');
    const info = (await remote.info()) as { Swarm: { LocalNodeState: string; NodeAddr: string } };
    t.equal(info.Swarm.LocalNodeState, 'active', "the server's engine is a swarm manager");
    t.equal(info.Swarm.NodeAddr, host.address, "advertising the server's own address");
    t.ok(
      (await remote.listNetworks({ filters: { name: ['berth-network'] } })).some(n => n.Name === 'berth-network'),
      'with the platform network',
    );
    t.same(await footprint(remote, applicationId), { services: 1, containers: 1 }, 'its service and task on the server');
    await nothingLocal(t, applicationId);
    t.match(await served(port, /^\d{3} /), /^200 from a file mount on the server/, "its httpd answers on the server's address, with the mounted file");

    const logs = await client.get('application.readLogs', { applicationId, tail: 50 });
    t.equal(logs.status, 200, JSON.stringify(logs.body));
    t.equal(typeof logs.body, 'string', 'its service log is read from the server');

    const stopped = await runFinished(client, 'application.stop', { applicationId });
    t.equal(stopped.status, 'done', stopped.errorMessage ?? '');
    await unreachable(port);
    t.equal((await client.get('application.one', { applicationId })).body.applicationStatus, 'idle');

    t.equal((await client.post('application.delete', { applicationId })).status, 200);
    await waitFor('the service gone from the server', async () => (await footprint(remote, applicationId)).services === 0, { timeout: 60_000 });
    await nothingLocal(t, applicationId);
    t.not((await inHost(host, ['test', '-e', onServer])).code, 0, 'its file mount is removed from the server with it');
  });

  t.test("an application from a git provider is built on the server's engine: the checkout and the token stay here, the base image copied", async t => {
    const secret = `kept-here-${Date.now().toString(36)}`;
    const repo = await makeGitRepo({
      Dockerfile: `FROM ${TEST_BASE_IMAGE}\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
      'index.html': 'built-on-the-server\n',
      'NOTES.txt': `${secret}\n`,
      '.dockerignore': 'NOTES.txt\n.git\n',
    });
    t.teardown(() => repo.cleanup());
    await remote
      .getImage(TEST_BASE_IMAGE)
      .remove({ force: true })
      .catch(() => undefined);
    const created = await client.post('application.create', { name: 'built', environmentId, serverId: SERVER });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const { applicationId, appName } = created.body as { applicationId: string; appName: string };
    t.teardown(() => client.post('application.delete', { applicationId }).catch(() => undefined));
    // Cloned from Bitbucket (on loopback) with the connection's API token, as a header scoped to its host.
    await bb.addGitRepo('team', 'built', repo.dir, { main: repo.commit });
    const connection = await client.post('bitbucket.create', { authId: 'x', name: 'Team', bitbucketEmail: bb.user.email, apiToken: bb.user.apiToken, bitbucketWorkspaceName: 'team' });
    t.equal(connection.status, 200, JSON.stringify(connection.body));
    t.teardown(() => client.post('gitProvider.remove', { gitProviderId: connection.body.gitProviderId }).catch(() => undefined));
    // autoDeploy off: this Berth has no publicUrl, without which a link with autoDeploy on is refused.
    t.equal((await client.post('application.update', { applicationId, autoDeploy: false })).status, 200);
    const linked = await client.post('application.saveBitbucketProvider', {
      applicationId,
      bitbucketId: connection.body.bitbucketId,
      bitbucketOwner: 'team',
      bitbucketRepository: 'built',
      bitbucketRepositorySlug: 'built',
      bitbucketBranch: 'main',
      bitbucketBuildPath: '/',
    });
    t.equal(linked.status, 200, JSON.stringify(linked.body));
    await client.post('application.saveBuildType', { applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile' });
    const port = await freePort();
    t.equal((await client.post('port.create', { applicationId, publishedPort: port, targetPort: 8080, publishMode: 'host', protocol: 'tcp' })).status, 200);

    const done = await runFinished(client, 'application.deploy', { applicationId });
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
    t.match(log, `Copied the base image ${TEST_BASE_IMAGE} to the server`);
    t.match(await served(port, /^200 built-on-the-server/), /built-on-the-server/, "the built image answers on the server's address");
    const tag = `berth/${appName}:deploy-${String(done.deploymentId).toLowerCase()}`;
    t.ok(await hasImage(remote, tag), 'the image was built on the server');
    t.notOk(await hasImage(local, tag), 'not here');
    await nothingLocal(t, applicationId);
    // The host's directory holds its engine's data, its /root, /home and /tmp.
    const found = spawnSync('grep', ['-rlsF', '--', secret, host.dir], { encoding: 'utf8' });
    t.equal(found.stdout, '', 'a file the build context leaves out never reached the server');
    t.equal((await inHost(host, ['sh', '-c', 'ps -eo args'])).stdout.includes(secret), false, 'nor its processes');
    // The token, as given and as the Basic header git sent, is on no file of the server and in none of its processes.
    const header = Buffer.from(`${bb.user.email}:${bb.user.apiToken}`).toString('base64');
    for (const [what, needle] of [
      ['the API token', bb.user.apiToken],
      ['the clone header', header],
    ] as const) {
      t.equal(spawnSync('grep', ['-rlsF', '--', needle, host.dir], { encoding: 'utf8' }).stdout, '', `${what}: on no file of the server`);
      t.equal((await inHost(host, ['sh', '-c', 'ps -eo args'])).stdout.includes(needle), false, `${what}: in none of its processes`);
      t.notMatch(log, needle, `${what}: not in the deployment log`);
    }

    t.equal((await client.post('application.delete', { applicationId })).status, 200);
    await waitFor('the service gone from the server', async () => (await footprint(remote, applicationId)).services === 0, { timeout: 60_000 });
  });

  t.test('a PostgreSQL database runs on the server and answers on its address', async t => {
    const password = 'Pg-pass_1#(x)';
    const created = await client.post('postgres.create', {
      name: 'db',
      environmentId,
      serverId: SERVER,
      dockerImage: TEST_POSTGRES_IMAGE,
      databaseName: 'shop',
      databaseUser: 'shop',
      databasePassword: password,
    });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const { postgresId, appName } = created.body as { postgresId: string; appName: string };
    t.teardown(async () => {
      await remote
        .getService(appName)
        .remove()
        .catch(() => undefined);
      await waitFor('its containers gone', async () => (await footprint(remote, postgresId)).containers === 0, { timeout: 60_000 }).catch(() => undefined);
      for (const v of (await remote.listVolumes({ filters: { label: [`berth.id=${postgresId}`] } })).Volumes ?? [])
        await remote
          .getVolume(v.Name)
          .remove()
          .catch(() => undefined);
    });
    const port = await freePort();
    t.equal((await client.post('postgres.saveExternalPort', { postgresId, externalPort: port })).status, 200);
    const done = await runFinished(client, 'postgres.deploy', { postgresId });
    t.equal(done.status, 'done', done.errorMessage ?? '');
    t.ok(await hasImage(remote, TEST_POSTGRES_IMAGE), 'the image copied to the server');
    t.same(await footprint(remote, postgresId), { services: 1, containers: 1 });
    t.ok((await remote.listVolumes({ filters: { label: [`berth.id=${postgresId}`] } })).Volumes?.length, 'its data volume on the server');
    t.same((await local.listVolumes({ filters: { label: [`berth.id=${postgresId}`] } })).Volumes ?? [], [], 'and not here');
    await nothingLocal(t, postgresId);

    const rows = await waitFor(
      `postgres on ${host.address}:${port}`,
      async () => {
        const c = new pg.Client({ host: host.address, port, user: 'shop', password, database: 'shop', connectionTimeoutMillis: 3000 });
        c.on('error', () => undefined);
        try {
          await c.connect();
          return (await c.query('select 1 as one')).rows;
        } catch {
          return undefined;
        } finally {
          await c.end().catch(() => undefined);
        }
      },
      { timeout: 90_000, interval: 500 },
    );
    t.same(rows, [{ one: 1 }], "it answers on the server's address");

    // Backups of it, of the database and of its volume, taken and restored on the server.
    const sql = async (text: string) => {
      const c = new pg.Client({ host: host.address, port, user: 'shop', password, database: 'shop', connectionTimeoutMillis: 3000 });
      await c.connect();
      try {
        return (await c.query(text)).rows as Record<string, unknown>[];
      } finally {
        await c.end().catch(() => undefined);
      }
    };
    const reachable = () =>
      waitFor(
        'postgres answering again',
        () =>
          sql('select 1').then(
            () => true,
            () => false,
          ),
        { timeout: 90_000, interval: 500 },
      );
    const dest = (
      await client.post('destination.create', { name: 'disk', provider: 'local', bucket: 'on-server', endpoint: '', region: '', accessKey: '', secretAccessKey: '', additionalFlags: null })
    ).body;
    await sql("create table orders (id int primary key, item text); insert into orders select g, 'item ' || g from generate_series(1, 50) g");
    const backup = await client.post('backup.create', {
      schedule: '0 3 * * *',
      enabled: false,
      prefix: 'remote',
      destinationId: dest.destinationId,
      database: 'shop',
      databaseType: 'postgres',
      postgresId,
    });
    t.equal(backup.status, 200, JSON.stringify(backup.body));
    t.equal((await client.post('backup.manualBackupPostgres', { backupId: backup.body.backupId })).body, true, "a database backup of the server's database");
    const [dump] = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: 'remote/' })).body as { Path: string; Size: number }[];
    t.ok(dump && dump.Size > 100, 'its file is in the destination');
    await sql('drop table orders');
    const restoredDb = await client.post('backup.restoreBackup', { databaseId: postgresId, databaseType: 'postgres', databaseName: 'shop', backupFile: dump!.Path, destinationId: dest.destinationId });
    t.equal(restoredDb.status, 200, JSON.stringify(restoredDb.body));
    const dbDone = await deploymentFinished(client, restoredDb.body.deploymentId);
    t.equal(dbDone.status, 'done', dbDone.errorMessage ?? '');
    t.same(await sql('select count(*)::int as n from orders'), [{ n: 50 }], 'restored on the server: the rows are back');

    const spec = (await remote.getService(appName).inspect()).Spec as { TaskTemplate: { ContainerSpec: { Mounts: { Type: string; Source: string }[] } } };
    const volumeName = spec.TaskTemplate.ContainerSpec.Mounts.find(m => m.Type === 'volume')!.Source;
    const volume = await client.post('volumeBackups.create', {
      name: 'pg volume',
      volumeName,
      prefix: 'vol',
      serviceType: 'postgres',
      cronExpression: '0 3 * * *',
      destinationId: dest.destinationId,
      postgresId,
      turnOff: true,
    });
    t.equal(volume.status, 200, JSON.stringify(volume.body));
    t.equal((await client.post('volumeBackups.runManually', { volumeBackupId: volume.body.volumeBackupId })).body, true, "a volume backup of the server's volume");
    const [archive] = (await client.get('backup.listBackupFiles', { destinationId: dest.destinationId, search: `${appName}/vol/` })).body as { Path: string; Size: number }[];
    t.ok(archive && archive.Size > 1000, 'its archive is in the destination');
    await reachable();
    await sql("insert into orders values (1000, 'after the volume backup')");
    const restoredVolume = await client.post('volumeBackups.restore', { backupFileName: archive!.Path, destinationId: dest.destinationId, volumeName, id: postgresId, serviceType: 'postgres' });
    t.equal(restoredVolume.status, 200, JSON.stringify(restoredVolume.body));
    const volumeDone = await deploymentFinished(client, restoredVolume.body.deploymentId, { timeout: 120_000 });
    t.equal(volumeDone.status, 'done', volumeDone.errorMessage ?? '');
    await reachable();
    t.same(await sql('select count(*)::int as n from orders'), [{ n: 50 }], 'the volume restored on the server: the row written after its backup is gone');
    t.same((await local.listVolumes({ filters: { name: [volumeName] } })).Volumes ?? [], [], 'no volume of that name was made here');
    await nothingLocal(t, postgresId);

    const logs = await client.get('postgres.readLogs', { postgresId, tail: 50 });
    t.equal(logs.status, 200, JSON.stringify(logs.body));
    const stopped = await runFinished(client, 'postgres.stop', { postgresId });
    t.equal(stopped.status, 'done', stopped.errorMessage ?? '');
    t.equal((await client.post('postgres.remove', { postgresId })).status, 200);
    await waitFor('the service gone from the server', async () => (await footprint(remote, postgresId)).services === 0, { timeout: 60_000 });
    await nothingLocal(t, postgresId);
  });

  for (const type of ['docker-compose', 'stack'] as const) {
    t.test(`a compose stack (${type}) runs on the server`, async t => {
      const port = await freePort();
      const file = `services:
  web:
    image: ${TEST_BASE_IMAGE}
    init: true
    stop_grace_period: 1s
    command: ["sh", "-c", "mkdir -p /www && echo on-the-server > /www/index.html && exec httpd -f -p 8080 -h /www"]
    ports:
      - target: 8080
        published: ${port}
        mode: host
    volumes:
      - ../files/greeting.txt:/www/greeting.txt:ro
    deploy:
      endpoint_mode: dnsrr
`;
      const created = await client.post('compose.create', { name: `stack ${type}`, environmentId, serverId: SERVER, composeType: type, composeFile: file });
      t.equal(created.status, 200, JSON.stringify(created.body));
      t.equal(created.body.serverId, SERVER);
      const { composeId, appName } = created.body as { composeId: string; appName: string };
      // A file mount: written under the stack's files/ directory, which the file binds by a relative path.
      const mount = await client.post('mounts.create', {
        serviceId: composeId,
        serviceType: 'compose',
        type: 'file',
        filePath: 'greeting.txt',
        content: `hello from a file mount (${type})\n`,
        mountPath: '/greeting.txt',
      });
      t.equal(mount.status, 200, JSON.stringify(mount.body));
      const label = `${type === 'stack' ? 'com.docker.stack.namespace' : 'com.docker.compose.project'}=${appName}`;
      const containersOf = (docker: Docker) => docker.listContainers({ all: true, filters: { label: [label] } });
      t.teardown(() => client.post('compose.delete', { composeId, deleteVolumes: true }).catch(() => undefined));

      const done = await runFinished(client, 'compose.deploy', { composeId });
      const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
      t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
      t.ok((await containersOf(remote)).length >= 1, 'its containers run on the server');
      t.same(await containersOf(local), [], 'none on the local engine');
      await nothingLocal(t, composeId);
      t.match(await served(port, /^200 on-the-server/), /on-the-server/, "it answers on the server's address");
      const greeting = await fetch(`http://${host.address}:${port}/greeting.txt`, { signal: AbortSignal.timeout(5000) });
      t.equal(await greeting.text(), `hello from a file mount (${type})\n`, 'the file mount, bound by a relative path, was copied to the server and bound there');
      const filesDir = ['sh', '-c', 'd="$(getent passwd "$1" | cut -d: -f6)/.berth/files/$2"; if [ -d "$d" ]; then ls -R "$d"; else echo "no $d"; fi', 'sh', host.user, appName];
      t.match((await inHost(host, filesDir)).stdout, /greeting\.txt/, "below the workload's files directory of the login");

      const stopped = await runFinished(client, 'compose.stop', { composeId });
      t.equal(stopped.status, 'done', stopped.errorMessage ?? '');
      await unreachable(port);
      t.equal((await client.post('compose.delete', { composeId, deleteVolumes: true })).status, 200);
      await waitFor('the stack gone from the server', async () => (await containersOf(remote)).length === 0, { timeout: 60_000 });
      t.match((await inHost(host, filesDir)).stdout, /^no \//, 'its files directory on the server is removed with it');
      t.same(await containersOf(local), [], 'and nothing of it here');
    });
  }
  t.test("a domain of an application on the server is routed by the server's own proxy", async t => {
    /** A request to the server's address, on the proxy's http port, for a host name (as a browser whose DNS points the host there). */
    const through = (hostName: string) =>
      new Promise<{ status: number; body: string } | undefined>(resolve => {
        const req = http.request({ host: host.address, port: proxyHttpPort, path: '/', headers: { Host: hostName }, timeout: 3000 }, res => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', c => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('timeout', () => req.destroy());
        req.on('error', () => resolve(undefined));
        req.end();
      });
    const created = await client.post('application.create', { name: 'routed', environmentId, serverId: SERVER });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const { applicationId } = created.body as { applicationId: string };
    t.teardown(() => client.post('application.delete', { applicationId }).catch(() => undefined));
    const site = 'mkdir -p /www && echo "routed on $HOSTNAME" > /www/index.html && exec httpd -f -p 3000 -h /www';
    await client.post('application.update', { applicationId, command: 'sh', args: ['-c', site], stopGracePeriodSwarm: 1_000_000_000 });
    await client.post('application.saveDockerProvider', { applicationId, dockerImage: TEST_BASE_IMAGE });
    const done = await runFinished(client, 'application.deploy', { applicationId });
    t.equal(done.status, 'done', done.errorMessage ?? '');

    const domain = await client.post('domain.create', { host: 'routed.test', applicationId, port: 3000 });
    t.equal(domain.status, 200, JSON.stringify(domain.body));
    const answer = await waitFor(
      "routed.test through the server's proxy",
      async () => {
        const a = await through('routed.test');
        return a?.status === 200 ? a : undefined;
      },
      { timeout: 60_000, interval: 250 },
    );
    t.match(answer.body, /^routed on /, "the application's task on the server answers");
    t.ok(await remote.getService(PROXY).inspect(), "the proxy's service runs on the server's engine");
    t.equal(
      await local
        .getService(PROXY)
        .inspect()
        .then(
          () => true,
          () => false,
        ),
      false,
      'no proxy was started on the local engine',
    );
    const caddyJson = await inHost(host, ['sh', '-c', `cat /home/${host.user}/.berth/proxy/caddy/caddy.json`]);
    t.match(caddyJson.stdout, /routed\.test/, "its configuration is written on the server, in the login's home");

    const one = await client.get('domain.one', { domainId: domain.body.domainId });
    t.equal(one.status, 200, JSON.stringify(one.body));
    const check = (name: string) => one.body.preflight.checks.find((c: { check: string }) => c.check === name);
    t.match(check('workload'), { ok: true }, 'the preflight finds the workload on its server');
    t.match(check('proxyPort'), { ok: true, reason: `port ${proxyHttpPort} of server ${SERVER} (${host.address})` }, "and the server's proxy on its address");
    t.match(check('dns'), { ok: false, reason: `pointing at ${host.address}` }, "DNS is asked for the server's address");

    t.equal((await client.post('domain.delete', { domainId: domain.body.domainId })).status, 200);
    await waitFor('routed.test no longer routed', async () => (await through('routed.test'))?.status === 404, { timeout: 30_000 });
    t.equal((await client.post('application.delete', { applicationId })).status, 200);
  });
}
