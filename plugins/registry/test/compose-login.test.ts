// Compose stacks whose images are in a registry of the organization: the Compose program and
// `docker stack deploy --with-registry-auth` get a CLI login for that run only (a private
// DOCKER_CONFIG, the password on standard input), logged out and removed afterwards. A real
// registry (Debian's docker-registry with htpasswd, on a loopback port) holds the image; the
// engine has no copy of it under that name, so each deploy really pulls it with the login. An image
// written with variables (`${REGISTRY}/team/web:${TAG}`) is matched once the env is interpolated.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import Docker from 'dockerode';
import { canRun, freePort, runFinished, signUpAdmin, startTestServer, waitFor, TEST_BASE_IMAGE } from '@berth/core/testing';
import { registryMissing, startLocalRegistry } from './local-registry.ts';

t.setTimeout(300_000);
const docker = new Docker();

if (canRun(t, 'docker-registry', registryMissing())) {
  const PASSWORD = `compose-login-${randomBytes(8).toString('hex')}`;
  const registry = await startLocalRegistry({ pusher: PASSWORD });
  t.teardown(() => registry.stop());
  const tag = randomBytes(4).toString('hex');
  const image = `${registry.url}/team/web:${tag}`;
  const auth = { username: 'pusher', password: PASSWORD, serveraddress: registry.url };
  const follow = (stream: NodeJS.ReadableStream) =>
    new Promise<void>((resolve, reject) =>
      docker.modem.followProgress(stream, (err: Error | null, out: { error?: string }[]) => (err || out.find(o => o.error) ? reject(err ?? new Error(out.find(o => o.error)!.error)) : resolve())),
    );
  await docker.getImage(TEST_BASE_IMAGE).tag({ repo: `${registry.url}/team/web`, tag });
  await follow(await docker.getImage(image).push({ authconfig: auth } as object));
  /** The engine forgets the name, so the next deploy must pull it from the registry. */
  const forget = () =>
    docker
      .getImage(image)
      .remove()
      .catch(() => undefined);
  await forget();
  t.teardown(forget);

  const server = await startTestServer({ deploySettleSeconds: 1, proxy: 'none' });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const reg = await client.post('registry.create', { registryName: 'loopback', username: 'pusher', password: PASSWORD, registryUrl: registry.url, registryType: 'cloud' });
  const registryId = reg.body.registryId as string;
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Registry stacks' });
  const leftovers = async () => (await readdir(os.tmpdir())).filter(f => f.startsWith('berth-docker-config-'));
  const credentials = () => spawnSync('grep', ['-rlsF', '--', PASSWORD, '/root/.docker', '/etc/docker']).stdout.toString();
  const stack = (port: number, ref = image) =>
    `services:\n  web:\n    image: ${ref}\n    init: true\n    command: ["sh", "-c", "mkdir -p /www && echo from-the-registry > /www/index.html && exec httpd -f -p 8080 -h /www"]\n    ports:\n      - target: 8080\n        published: ${port}\n        mode: host\n`;

  /** The page the stack serves on this machine's port, once it answers. */
  const servedOn = (port: number) =>
    waitFor(
      `port ${port}`,
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
        return res?.ok ? res.text() : undefined;
      },
      { timeout: 60_000, interval: 250 },
    );

  for (const composeType of ['docker-compose', 'stack'] as const) {
    t.test(`${composeType}: the image is pulled with a login for this run only`, async t => {
      await forget();
      const port = await freePort();
      const created = await client.post('compose.create', {
        name: composeType,
        environmentId: environment.environmentId,
        composeType,
        appName: `reg-${composeType === 'stack' ? 'stk' : 'dc'}-${tag}`,
        composeFile: stack(port),
      });
      t.equal(created.status, 200, JSON.stringify(created.body));
      const { composeId } = created.body as { composeId: string };
      t.teardown(() => client.post('compose.delete', { composeId, deleteVolumes: true }).catch(() => undefined));
      const done = await runFinished(client, 'compose.deploy', { composeId });
      const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
      t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
      t.match(log, `Logged in to ${registry.url} for this run`);
      t.notMatch(log, PASSWORD, 'the password is not in the log');
      const body = await servedOn(port);
      t.equal(body, 'from-the-registry\n', 'the stack runs the image pulled from the registry');
      t.same(await leftovers(), [], 'the private DOCKER_CONFIG directory is gone');
      t.equal(credentials(), '', 'no credential in /root/.docker or /etc/docker');
    });
  }

  for (const composeType of ['docker-compose', 'stack'] as const) {
    t.test(`${composeType}: an image written with variables is matched to its registry once the env is interpolated`, async t => {
      await forget();
      const port = await freePort();
      const created = await client.post('compose.create', {
        name: `${composeType} vars`,
        environmentId: environment.environmentId,
        composeType,
        appName: `reg-var-${composeType === 'stack' ? 'stk' : 'dc'}-${tag}`,
        composeFile: stack(port, '${REGISTRY}/${TEAM:-team}/web:${TAG:?the tag}'),
      });
      t.equal(created.status, 200, JSON.stringify(created.body));
      const { composeId } = created.body as { composeId: string };
      t.teardown(() => client.post('compose.delete', { composeId, deleteVolumes: true }).catch(() => undefined));
      t.equal((await client.post('compose.saveEnvironment', { composeId, env: `REGISTRY=${registry.url}\nTAG=${tag}\n` })).status, 200);
      const done = await runFinished(client, 'compose.deploy', { composeId });
      const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
      t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
      // The env's values are redacted in the log (the registry's address is one): the login line, and
      // a pull that succeeded from a registry that answers none without it, show the match.
      t.match(log, /Logged in to \S+ for this run/, 'a login for the interpolated image');
      t.notMatch(log, PASSWORD);
      const body = await servedOn(port);
      t.equal(body, 'from-the-registry\n', 'the stack runs the image pulled from the registry under its interpolated name');
      t.same(await leftovers(), [], 'the private DOCKER_CONFIG directory is gone');
      t.equal(credentials(), '', 'no credential in /root/.docker or /etc/docker');
    });
  }

  t.test('a wrong password fails at the login, naming the registry, and the password is in no error', async t => {
    await forget();
    const WRONG = `wrong-${randomBytes(6).toString('hex')}`;
    t.equal((await client.post('registry.update', { registryId, password: WRONG })).status, 200);
    const created = await client.post('compose.create', { name: 'wrong', environmentId: environment.environmentId, appName: `reg-wrong-${tag}`, composeFile: stack(await freePort()) });
    const { composeId } = created.body as { composeId: string };
    t.teardown(() => client.post('compose.delete', { composeId, deleteVolumes: true }).catch(() => undefined));
    const done = await runFinished(client, 'compose.deploy', { composeId });
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'error', log);
    t.match(done.errorMessage, `Login to ${registry.url} failed`);
    t.notMatch(`${done.errorMessage}\n${log}`, WRONG, 'the password is in no error or log line');
    t.same(await leftovers(), [], 'the private DOCKER_CONFIG directory is gone');
  });
}
