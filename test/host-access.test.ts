// Host access is the operator's to grant (issue 13, findings 1–3): bind mounts, host networks
// and repositories of this host are off unless the config allows them, only below the listed
// directories (links resolved, never Berth's own data or install directory or a parent of them),
// and only for the instance owner — not for whoever owns an organization. A record the policy
// now refuses fails its next deploy, on the real engine, with the same message.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, signUpAdmin, Client, TEST_BASE_IMAGE, type Reply, runFinished } from '@berth/core/testing';
import type { BerthConfig } from '@berth/core';
import { repoRoot } from './helpers.ts';

t.setTimeout(300_000);

const policy = (p: Partial<BerthConfig['hostAccess']>): BerthConfig['hostAccess'] => ({ bindMountRoots: [], hostNetworks: false, localGit: false, ...p });
/** A 403 whose message and issue name the field and the config key. */
const refused = (r: Reply, field: string, key: RegExp) =>
  r.status === 403 && r.body.code === 'FORBIDDEN' && r.body.message.startsWith(`${field}: `) && key.test(r.body.message) && r.body.issues.some((i: any) => i.path.join('.') === field);

/** A workload of the client's organization to mount things on. */
async function application(client: Client, name: string) {
  const project = await client.post('project.create', { name });
  const app = await client.post('application.create', { name, environmentId: project.body.environment.environmentId });
  await client.post('application.saveDockerProvider', { applicationId: app.body.applicationId, dockerImage: TEST_BASE_IMAGE });
  await client.post('application.update', { applicationId: app.body.applicationId, command: 'sleep', args: ['3600'] });
  return app.body as { applicationId: string; appName: string };
}

/** A second account that creates an organization of its own, and so owns it. */
async function organizationOwner(server: { url: string }, admin: Client) {
  await admin.post('user.createUserWithCredentials', { email: 'mallory@example.com', password: 'mallory-password-1', role: 'member' });
  const login = await new Client(server.url).post('auth.login', { email: 'mallory@example.com', password: 'mallory-password-1' });
  const asMallory = new Client(server.url, { token: login.body.token });
  const org = await asMallory.post('organization.create', { name: 'Mallory Inc' });
  const key = await asMallory.post('user.createApiKey', { name: 'mine', metadata: { organizationId: org.body.id } });
  return new Client(server.url, { apiKey: key.body.key });
}

t.test('off by default: bind mounts, host networks and local repositories answer 403 naming the field and the config key', async t => {
  const server = await startTestServer({ jobs: false });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const app = await application(client, 'default');
  t.ok(
    refused(await client.post('mounts.create', { serviceId: app.applicationId, type: 'bind', hostPath: '/srv/data', mountPath: '/data' }), 'hostPath', /hostAccess\.bindMountRoots/),
    'a bind mount, even for the instance owner',
  );
  t.ok(
    refused(await client.post('application.update', { applicationId: app.applicationId, networkSwarm: [{ Target: 'host' }] }), 'networkSwarm.0.Target', /hostAccess\.hostNetworks/),
    'the host network',
  );
  t.ok(
    refused(await client.post('application.update', { applicationId: app.applicationId, networkSwarm: [{ Target: 'ingress' }] }), 'networkSwarm.0.Target', /hostAccess\.hostNetworks/),
    'the ingress network',
  );
  t.ok(
    refused(
      await client.post('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: 'file:///some/host/path', customGitBranch: 'main' }),
      'customGitUrl',
      /hostAccess\.localGit/,
    ),
    'a file:// URL',
  );
  t.ok(
    refused(await client.post('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: '/some/host/path', customGitBranch: 'main' }), 'customGitUrl', /hostAccess\.localGit/),
    'a bare path',
  );
  t.equal(
    (await client.post('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: 'https://example.com/r.git', customGitBranch: 'main' })).status,
    200,
    'a remote repository is fine',
  );
  t.equal((await client.post('application.update', { applicationId: app.applicationId, networkSwarm: [{ Target: 'my-overlay' }] })).status, 200, 'an ordinary network is fine');
  const pg = await client.post('postgres.create', {
    name: 'db',
    appName: `ha-db-${Date.now().toString(36)}`,
    databaseName: 'db',
    databaseUser: 'u',
    databasePassword: 'pg-password-1',
    environmentId: (await client.get('project.all')).body[0].environments[0].environmentId,
  });
  t.ok(refused(await client.post('postgres.update', { postgresId: pg.body.postgresId, networkSwarm: [{ Target: 'host' }] }), 'networkSwarm.0.Target', /hostAccess\.hostNetworks/), 'databases too');
});

t.test("granted: only below the listed directories, links resolved, never Berth's own directories, and only for the instance owner", async t => {
  const allowed = mkdtempSync(path.join(os.tmpdir(), 'berth-ha-allowed-'));
  const outside = mkdtempSync(path.join(os.tmpdir(), 'berth-ha-outside-'));
  t.teardown(() => {
    rmSync(allowed, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  mkdirSync(path.join(allowed, 'uploads'));
  symlinkSync(outside, path.join(allowed, 'escape'));
  const server = await startTestServer({ jobs: false, hostAccess: policy({ bindMountRoots: [allowed, '/'], hostNetworks: true, localGit: true }) });
  let current = server; // restarted below: the last kernel is the one to stop
  t.teardown(() => current.destroy());
  symlinkSync(server.dataDir, path.join(allowed, 'data-link'));
  const { client } = await signUpAdmin(server);
  const app = await application(client, 'granted');
  const bind = (c: Client, hostPath: string) => c.post('mounts.create', { serviceId: app.applicationId, type: 'bind', hostPath, mountPath: `/m${Math.random().toString(36).slice(2, 8)}` });

  t.equal((await bind(client, path.join(allowed, 'uploads'))).status, 200, 'the owner binds below a listed directory');
  for (const [hostPath, what] of [
    [repoRoot.replace(/\/$/, ''), 'the directory Berth runs from'],
    [path.dirname(repoRoot.replace(/\/$/, '')), 'a parent of it'],
    [server.dataDir, 'the data directory'],
    [path.join(allowed, 'data-link'), 'a link to the data directory'],
  ] as const) {
    const reply = await bind(client, hostPath);
    // A parent that is itself a system directory (a clone in /tmp: its parent is /tmp) is refused
    // earlier, by the mounts plugin's own list of paths never mounted whole (400 naming hostPath).
    const systemPath = reply.status === 400 && reply.body.issues.some((i: any) => i.path.join('.') === 'hostPath' && /may not be mounted whole/.test(i.message));
    t.ok(refused(reply, 'hostPath', /Berth's own data or install directory/) || (what === 'a parent of it' && systemPath), `${what} is refused even below "/" (${reply.status} ${reply.body.message})`);
  }

  const narrow = (current = await server.restart({ hostAccess: policy({ bindMountRoots: [allowed] }) }));
  const owner = new Client(narrow.url, { apiKey: client.apiKey });
  t.ok(refused(await bind(owner, path.join(allowed, 'escape')), 'hostPath', /not below a directory of the config key hostAccess\.bindMountRoots/), 'a link that leads out of the listed directory');
  t.ok(refused(await bind(owner, outside), 'hostPath', /hostAccess\.bindMountRoots/), 'a directory that is not listed');

  const granted = (current = await narrow.restart({ hostAccess: policy({ bindMountRoots: [allowed], hostNetworks: true, localGit: true }) }));
  const admin = new Client(granted.url, { apiKey: client.apiKey });
  const mallory = await organizationOwner(granted, admin);
  const own = await application(mallory, 'mallory');
  t.ok(
    refused(await mallory.post('mounts.create', { serviceId: own.applicationId, type: 'bind', hostPath: path.join(allowed, 'uploads'), mountPath: '/x' }), 'hostPath', /only the instance owner/),
    'the owner of another organization may not bind',
  );
  t.ok(
    refused(await mallory.post('application.update', { applicationId: own.applicationId, networkSwarm: [{ Target: 'host' }] }), 'networkSwarm.0.Target', /only the instance owner/),
    'nor use the host network',
  );
  t.ok(
    refused(
      await mallory.post('application.saveGitProvider', { applicationId: own.applicationId, customGitUrl: `file://${repoRoot}`, customGitBranch: 'main' }),
      'customGitUrl',
      /only the instance owner/,
    ),
    'nor clone a repository of the host',
  );
  t.equal((await admin.post('application.update', { applicationId: app.applicationId, networkSwarm: [{ Target: 'host' }] })).status, 200, 'the instance owner may, when granted');
});

t.test('a record the policy now refuses fails its next deploy with that message, and nothing reaches the engine', async t => {
  const allowed = mkdtempSync(path.join(os.tmpdir(), 'berth-ha-deploy-'));
  t.teardown(() => rmSync(allowed, { recursive: true, force: true }));
  const server = await startTestServer({ hostAccess: policy({ bindMountRoots: [allowed], localGit: true }) });
  let current = server;
  t.teardown(() => current.destroy());
  const { client } = await signUpAdmin(server);
  const docker = await server.kernel.container.cradle.hosts.local();
  const app = await application(client, 'revoked');
  t.teardown(() =>
    docker
      .getService(app.appName)
      .remove()
      .catch(() => {}),
  );
  t.equal((await client.post('mounts.create', { serviceId: app.applicationId, type: 'bind', hostPath: allowed, mountPath: '/data' })).status, 200, 'granted when written');
  const repo = await application(client, 'local-repo');
  t.equal(
    (await client.post('application.saveGitProvider', { applicationId: repo.applicationId, customGitUrl: `file://${allowed}/repo.git`, customGitBranch: 'main' })).status,
    200,
    'a local repository, granted when written',
  );

  const later = (current = await server.restart({ hostAccess: policy({}) }));
  const c = new Client(later.url, { apiKey: client.apiKey });
  const ended = await runFinished(c, 'application.deploy', { applicationId: app.applicationId });
  t.equal(ended.status, 'error', 'the deploy fails');
  t.match(ended.errorMessage, /mounts\.hostPath: bind mounts are off on this instance .*hostAccess\.bindMountRoots/, 'naming the config key');
  t.equal((await c.get('mounts.listByServiceId', { serviceType: 'application', serviceId: app.applicationId })).body.length, 1, 'the mount is kept');
  await t.rejects(docker.getService(app.appName).inspect(), { statusCode: 404, message: `service ${app.appName} not found` }, 'no service was created');
  const cloned = await runFinished(c, 'application.deploy', { applicationId: repo.applicationId });
  t.equal(cloned.status, 'error', 'the local repository is not cloned');
  t.match(cloned.errorMessage, /customGitUrl: repositories on this host .*hostAccess\.localGit/, 'naming the config key');

  // A network given by id is still the host network: the engine says what it is.
  await c.post('mounts.remove', { mountId: (await c.get('mounts.listByServiceId', { serviceType: 'application', serviceId: app.applicationId })).body[0].mountId });
  const hostNetwork = (await docker.listNetworks({ filters: { name: ['host'] } })).find(n => n.Name === 'host')!;
  t.equal((await c.post('application.update', { applicationId: app.applicationId, networkSwarm: [{ Target: hostNetwork.Id }] })).status, 200, 'an id passes the write-time check of names');
  const failed = await runFinished(c, 'application.deploy', { applicationId: app.applicationId });
  t.equal(failed.status, 'error');
  t.match(failed.errorMessage, /networkSwarm\.0\.Target: the network host .*hostAccess\.hostNetworks/, 'the deploy names the network and the config key');
  await t.rejects(docker.getService(app.appName).inspect(), { statusCode: 404, message: `service ${app.appName} not found` }, 'still no service');
});
