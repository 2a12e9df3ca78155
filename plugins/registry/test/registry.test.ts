// registry.* through the real kernel, a real PostgreSQL database, the real engine and a real
// registry (Debian's docker-registry, with htpasswd; and behind Caddy with a read-only user):
// records without passwords, testRegistry that pushes and pulls for real and names the failing
// step, the check's image removed from the engine and the registry (plain HTTP only on loopback,
// never as a retry after HTTPS failed), nothing written in the engine's or the user's Docker
// configuration, and other organizations' registries 404.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import Docker from 'dockerode';
import { canRun, freePort, makeGitRepo, otherOrganization, runFinished, signUpAdmin, startTestServer, waitFor, TEST_BASE_IMAGE, TEST_CADDY_IMAGE } from '@berth/core/testing';
import { deleteFromRegistry, registryBase } from '../src/check.ts';
import { registryMissing, startGuardedRegistry, startLocalRegistry } from './local-registry.ts';

t.setTimeout(300_000);

/** Every file below the Docker configuration directories that mentions `needle`. */
function filesMentioning(needle: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (!existsSync(dir) || depth > 4) return;
    for (const entry of readdirSync(dir)) {
      const file = path.join(dir, entry);
      const st = statSync(file);
      if (st.isDirectory()) walk(file, depth + 1);
      else if (st.size < 1_000_000 && readFileSync(file, 'utf8').includes(needle)) found.push(file);
    }
  };
  walk(path.join(os.homedir(), '.docker'), 0);
  walk('/etc/docker', 0);
  return found;
}

if (canRun(t, 'docker-registry', registryMissing())) {
  const PASSWORD = 'pw-' + Math.random().toString(36).slice(2);
  const registry = await startLocalRegistry({ pusher: PASSWORD });
  t.teardown(() => registry.stop());
  const guarded = await startGuardedRegistry(['writer', PASSWORD + '-w'], ['reader', PASSWORD + '-r'], TEST_CADDY_IMAGE);
  t.teardown(() => guarded.stop());
  const server = await startTestServer({ deploySettleSeconds: 1, proxy: 'none', hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true } });
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);
  const docker = new Docker();
  const checkImagesOnEngine = async () => (await docker.listImages()).flatMap(i => i.RepoTags ?? []).filter(tag => tag.includes('berth-push-check'));
  const base = { registryName: 'local', username: 'pusher', password: PASSWORD, registryUrl: registry.url, registryType: 'cloud', imagePrefix: 'team' };

  t.test('create, one, all, update: no answer carries the password', async t => {
    const created = await client.post('registry.create', base);
    t.equal(created.status, 200, JSON.stringify(created.body));
    t.match(created.body, { registryName: 'local', username: 'pusher', registryUrl: registry.url, registryType: 'cloud', imagePrefix: 'team' });
    const id = created.body.registryId as string;
    const one = await client.get('registry.one', { registryId: id });
    t.same(one.body, created.body, 'one answers what create did');
    t.ok((await client.get('registry.all')).body.some((r: { registryId: string }) => r.registryId === id));
    const updated = await client.post('registry.update', { registryId: id, registryName: 'renamed', imagePrefix: null, serverId: 'none' });
    t.equal(updated.body, true);
    t.match((await client.get('registry.one', { registryId: id })).body, { registryName: 'renamed', imagePrefix: null });
    for (const reply of [created, one, updated, await client.get('registry.all')]) t.notMatch(JSON.stringify(reply.body), PASSWORD, 'no password in the answer');
    const stored = await server.kernel.container.cradle.orm.em.getConnection().execute(`select password from registries where registry_id = ?`, [id]);
    t.notMatch(stored[0]!.password, PASSWORD, 'sealed at rest');
    t.equal((await client.post('registry.remove', { registryId: id })).status, 200);
    t.equal((await client.get('registry.one', { registryId: id })).status, 404);
  });

  t.test('bad input names the field', async t => {
    for (const [field, value] of [
      ['registryUrl', 'https://x.example.com'],
      ['registryUrl', 'a b'],
      ['imagePrefix', 'Team/../x'],
      ['registryType', 'other'],
      ['password', ''],
    ] as const) {
      const r = await client.post('registry.create', { ...base, [field]: value });
      t.equal(r.status, 400, `${field}=${value}`);
      t.ok(
        r.body.issues.some((i: { path: string[] }) => i.path[0] === field),
        `${field} named`,
      );
    }
    t.equal((await client.post('registry.testRegistry', { ...base, registryName: '' })).status, 400, 'registryName, when given, is min 1');
  });

  t.test('testRegistry pushes and pulls, then removes the image from the engine and the registry', async t => {
    const before = await registry.tags('team/berth-push-check');
    const r = await client.post('registry.testRegistry', { username: 'pusher', password: PASSWORD, registryUrl: registry.url, registryType: 'cloud', imagePrefix: 'team' });
    t.equal(r.status, 200, JSON.stringify(r.body));
    t.equal(r.body, true);
    t.same(await checkImagesOnEngine(), [], 'the check image is gone from the engine');
    t.same(await registry.tags('team/berth-push-check'), before, 'and from the registry (deleted by digest)');
    t.same(filesMentioning(PASSWORD.slice(0, 12)), [], 'no password in ~/.docker or /etc/docker');
    t.same(filesMentioning(registry.url), [], 'no login recorded for the registry');
  });

  t.test('the deletion speaks HTTPS off loopback and never retries over plain HTTP with the credentials', async t => {
    // A plain-HTTP listener that records every request: on a non-loopback address of this machine
    // HTTPS fails against it (it speaks no TLS), and nothing may follow over HTTP.
    const seen: { method: string; authorization: string | undefined }[] = [];
    const listener = http.createServer((req, res) => {
      seen.push({ method: req.method ?? '', authorization: req.headers.authorization });
      res.writeHead(404).end();
    });
    await new Promise<void>(resolve => listener.listen(0, '0.0.0.0', resolve));
    t.teardown(() => new Promise<void>(resolve => listener.close(() => resolve())));
    const port = (listener.address() as AddressInfo).port;
    const address = Object.values(os.networkInterfaces())
      .flat()
      .find(i => i && i.family === 'IPv4' && !i.internal)?.address;
    t.ok(address, `a non-loopback address of this machine (${address})`);
    const credentials = { username: 'pusher', password: PASSWORD, imagePrefix: null };
    const refusal = await deleteFromRegistry({ ...credentials, registryUrl: `${address}:${port}` }, 'team/berth-push-check', 'x', AbortSignal.timeout(10_000));
    t.match(refusal, /could not be reached over https/, 'HTTPS failed, and the deletion says so');
    t.same(seen, [], 'no request reached the plain-HTTP listener: no credentials in clear');
    // Positive control: the same listener on loopback, which Docker itself trusts without TLS, is asked over HTTP.
    const onLoopback = await deleteFromRegistry({ ...credentials, registryUrl: `127.0.0.1:${port}` }, 'team/berth-push-check', 'x', AbortSignal.timeout(10_000));
    t.match(onLoopback, 'the registry answered 404');
    t.same(seen, [{ method: 'HEAD', authorization: `Basic ${Buffer.from(`pusher:${PASSWORD}`).toString('base64')}` }], 'the listener records what reaches it');
    t.equal(registryBase(`${address}:${port}`).protocol, 'https:');
    t.equal(registryBase('localhost:5000').protocol, 'http:', 'localhost is loopback');
    t.equal(registryBase('').href, 'https://registry-1.docker.io/', 'Docker Hub');
  });

  t.test('a wrong password fails at the login step, without the password in the error', async t => {
    const wrong = PASSWORD + '-wrong';
    const r = await client.post('registry.testRegistry', { ...base, password: wrong });
    t.equal(r.status, 400);
    t.match(r.body.message, /^Login to 127\.0\.0\.1:\d+ failed/);
    t.notMatch(r.body.message, wrong);
  });

  t.test('a user who may pull but not push fails at the push step', async t => {
    const reader = await client.post('registry.testRegistry', { username: 'reader', password: PASSWORD + '-r', registryUrl: guarded.url, registryType: 'cloud', imagePrefix: 'team' });
    t.equal(reader.status, 400, JSON.stringify(reader.body));
    t.match(reader.body.message, /Login to 127\.0\.0\.1:\d+ succeeded, but the push of 127\.0\.0\.1:\d+\/team\/berth-push-check:[0-9a-f]+ failed/);
    t.same(await checkImagesOnEngine(), [], 'the check image is removed after a failed push too');
    const writer = await client.post('registry.testRegistry', { username: 'writer', password: PASSWORD + '-w', registryUrl: guarded.url, registryType: 'cloud', imagePrefix: 'team' });
    t.equal(writer.status, 200, JSON.stringify(writer.body));
  });

  t.test('testRegistryById checks a stored registry; other organizations see 404', async t => {
    const created = await client.post('registry.create', base);
    const id = created.body.registryId as string;
    const ok = await client.post('registry.testRegistryById', { registryId: id });
    t.equal(ok.status, 200, JSON.stringify(ok.body));
    t.equal(ok.body, true);
    const unknownServer = await client.post('registry.testRegistryById', { registryId: id, serverId: 'no-such-server' });
    t.equal(unknownServer.status, 404, 'a server nobody keeps');
    const other = await otherOrganization(server, userId);
    for (const [op, input] of [
      ['registry.one', { registryId: id }],
      ['registry.update', { registryId: id, registryName: 'theirs' }],
      ['registry.remove', { registryId: id }],
      ['registry.testRegistryById', { registryId: id }],
    ] as const) {
      const r = op === 'registry.one' ? await other.client.get(op, input) : await other.client.post(op, input);
      t.equal(r.status, 404, `${op} of another organization's registry`);
    }
    t.same((await other.client.get('registry.all')).body, [], 'their list is empty');
    t.equal((await client.get('registry.one', { registryId: id })).body.registryName, 'local', 'unchanged');
  });

  t.test('application.one joins the registries its ids name, as registry.one answers them (no password)', async t => {
    const reg = (await client.post('registry.create', base)).body.registryId as string;
    const build = (await client.post('registry.create', { ...base, registryName: 'builds', imagePrefix: null })).body.registryId as string;
    t.teardown(() => Promise.all([reg, build].map(registryId => client.post('registry.remove', { registryId }))));
    const { body: project } = await client.post('project.create', { name: 'Joined registries' });
    const { applicationId } = (await client.post('application.create', { name: 'joined', environmentId: project.environment.environmentId })).body as { applicationId: string };
    t.teardown(() => client.post('application.delete', { applicationId }));
    t.match((await client.get('application.one', { applicationId })).body, { registry: null, buildRegistry: null, rollbackRegistry: null }, 'null without ids');
    t.equal((await client.post('application.update', { applicationId, registryId: reg, buildRegistryId: build, rollbackRegistryId: reg })).status, 200);
    const one = await client.get('application.one', { applicationId });
    t.equal(one.status, 200, JSON.stringify(one.body));
    const own = (await client.get('registry.one', { registryId: reg })).body;
    t.same(one.body.registry, own, 'registry: the record registry.one answers');
    t.same(one.body.rollbackRegistry, own, 'rollbackRegistry too');
    t.same(one.body.buildRegistry, (await client.get('registry.one', { registryId: build })).body, 'buildRegistry: its own record');
    t.notMatch(JSON.stringify(one.body), PASSWORD, 'no password in application.one');
    await client.post('registry.remove', { registryId: build });
    t.equal((await client.get('application.one', { applicationId })).body.buildRegistry, null, 'a removed registry joins as null');
  });

  t.test('an application with a registry is built, pushed there and deployed with its credentials', async t => {
    const repo = await makeGitRepo({
      Dockerfile: `FROM ${TEST_BASE_IMAGE}\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
      'index.html': 'through-the-registry\n',
    });
    t.teardown(() => repo.cleanup());
    const reg = (await client.post('registry.create', base)).body.registryId as string;
    const { body: project } = await client.post('project.create', { name: 'Through a registry' });
    const created = await client.post('application.create', { name: 'pushed', environmentId: project.environment.environmentId });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const { applicationId, appName } = created.body as { applicationId: string; appName: string };
    t.teardown(() => client.post('application.delete', { applicationId }).catch(() => undefined));
    await client.post('application.saveGitProvider', { applicationId, customGitUrl: `file://${repo.dir}`, customGitBranch: 'main', customGitBuildPath: '/' });
    await client.post('application.saveBuildType', { applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile' });
    t.equal((await client.post('application.update', { applicationId, registryId: reg })).status, 200);
    const port = await freePort();
    t.equal((await client.post('port.create', { applicationId, publishedPort: port, targetPort: 8080, publishMode: 'host', protocol: 'tcp' })).status, 200);

    const done = await runFinished(client, 'application.deploy', { applicationId });
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
    const tag = `deploy-${String(done.deploymentId).toLowerCase()}`;
    const image = `${registry.url}/team/${appName.toLowerCase()}:${tag}`;
    t.match(log, `Pushed ${image}`);
    t.notMatch(log, PASSWORD, 'no password in the deployment log');
    t.same(await registry.tags(`team/${appName.toLowerCase()}`), [tag], 'the registry holds the deployed image');
    const [service] = await docker.listServices({ filters: { label: [`berth.id=${applicationId}`] } });
    t.match(service?.Spec?.TaskTemplate, { ContainerSpec: { Image: new RegExp(`^${image.replace(/[.:/]/g, m => '\\' + m)}(@sha256:[0-9a-f]+)?$`) } }, 'the service runs the registry reference');
    const body = await waitFor(
      'the application answering',
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined);
        return res?.ok ? res.text() : undefined;
      },
      { timeout: 60_000, interval: 250 },
    );
    t.equal(body, 'through-the-registry\n');
    t.same(filesMentioning(PASSWORD.slice(0, 12)), [], 'no password left in ~/.docker or /etc/docker');
    t.equal((await client.post('application.delete', { applicationId })).status, 200);
    await docker
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
  });
}
