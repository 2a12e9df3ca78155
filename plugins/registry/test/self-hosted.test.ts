// registry.enableSelfHostedRegistry for real: the registry image built locally from Debian's
// docker-registry (berth-test/registry:1, set as registryImage), Caddy (the test image) as the
// proxy with its own CA, this machine's engine as the manager and only node. The registry's host
// name resolves to this machine through /etc/hosts (a line of this run's, removed afterwards), so
// the engine reaches it as any client would: by name, over TLS, trusting the CA Berth wrote; and
// Berth itself trusts that CA when it deletes the check's image from the registry.
import t from 'tap';
import https from 'node:https';
import { connect } from 'node:tls';
import { randomBytes } from 'node:crypto';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import Docker from 'dockerode';
import { canRun, freePort, signUpAdmin, startTestServer, waitFor, TEST_BASE_IMAGE, TEST_CADDY_IMAGE, TEST_REGISTRY_IMAGE } from '@berth/core/testing';

t.setTimeout(240_000);
const docker = new Docker();
const SERVICE = 'berth-registry';
const VOLUME = 'berth-registry-data';
const imageMissing =
  spawnSync('docker', ['image', 'inspect', TEST_REGISTRY_IMAGE], { stdio: 'ignore' }).status === 0 ? undefined : `${TEST_REGISTRY_IMAGE} is missing (scripts/db-images.sh builds it)`;

const removeRegistryService = async () => {
  await docker
    .getService(SERVICE)
    .remove()
    .catch(() => undefined);
  await waitFor('the registry container to go', async () => (await docker.listContainers({ all: true, filters: { label: ['berth.registry.id'] } })).length === 0, { timeout: 30_000, interval: 250 });
  for (const s of await docker.listSecrets({ filters: { label: ['berth.registry.id'] } }))
    await docker
      .getSecret(s.ID)
      .remove()
      .catch(() => undefined);
};

if (canRun(t, 'registry image', imageMissing)) {
  const tag = randomBytes(3).toString('hex');
  const PROXY = `berth-test-proxy-${tag}`;
  const PASSWORD = `self-hosted-${randomBytes(8).toString('hex')}`;
  const host = `registry-${tag}.berth.test`;
  const httpsPort = await freePort();
  const registryUrl = `${host}:${httpsPort}`;
  const hostsLine = `127.0.0.1 ${host} # berth test ${process.pid}\n`;
  // A run that was killed may have left its registry: the service name is one per engine.
  await removeRegistryService();
  await appendFile('/etc/hosts', hostsLine);
  t.teardown(async () => {
    // Written in place: /etc/hosts may be a bind mount.
    await writeFile('/etc/hosts', (await readFile('/etc/hosts', 'utf8')).replace(hostsLine, ''));
  });

  const server = await startTestServer({
    proxy: 'caddy',
    proxyImage: TEST_CADDY_IMAGE,
    proxyHttpPort: await freePort(),
    proxyHttpsPort: httpsPort,
    registryImage: TEST_REGISTRY_IMAGE,
    providers: { proxy: { caddy: { options: { serviceName: PROXY } } } },
  });
  t.teardown(async () => {
    await removeRegistryService();
    await docker
      .getVolume(VOLUME)
      .remove()
      .catch(() => undefined);
    await docker
      .getService(PROXY)
      .remove()
      .catch(() => undefined);
    await server.destroy();
  });
  const { client } = await signUpAdmin(server);
  const caFile = `/etc/docker/certs.d/${registryUrl}/ca.crt`;
  const auth = { username: 'owner', password: PASSWORD, serveraddress: registryUrl };

  t.test('the registry runs behind the proxy, the node trusts its CA, an image is pushed and pulled through it', async t => {
    const wrongPort = await client.post('registry.enableSelfHostedRegistry', { registryUrl: `${host}:1`, username: 'owner', password: PASSWORD });
    t.equal(wrongPort.status, 400);
    t.match(wrongPort.body.message, `its address must be ${registryUrl}`, "the address names the proxy's https port");

    const enabled = await client.post('registry.enableSelfHostedRegistry', { registryUrl, username: 'owner', password: PASSWORD });
    t.equal(enabled.status, 200, JSON.stringify(enabled.body));
    t.match(enabled.body, { registryName: 'Self Hosted Registry', registryType: 'selfHosted', registryUrl, username: 'owner', imagePrefix: null });
    t.notOk('password' in enabled.body, 'no password in the answer');
    t.notMatch(JSON.stringify(enabled.body), PASSWORD);
    const registryId = enabled.body.registryId as string;
    t.match((await client.get('registry.one', { registryId })).body, { registryType: 'selfHosted', registryUrl });

    const spec = (await docker.getService(SERVICE).inspect()) as {
      Spec: { Labels: Record<string, string>; TaskTemplate: { ContainerSpec: { Image: string; Mounts: { Type: string; Source: string; Target: string }[] } } };
    };
    t.match(spec.Spec.Labels, { 'berth.kind': 'registry', 'berth.id': registryId, 'berth.organization': String }, "Berth's ownership labels");
    t.match(spec.Spec.TaskTemplate.ContainerSpec.Image, new RegExp(`^${TEST_REGISTRY_IMAGE}`), 'the configured registryImage runs');
    t.match(spec.Spec.TaskTemplate.ContainerSpec.Mounts, [{ Type: 'volume', Source: VOLUME, Target: '/var/lib/registry' }], 'its data is in a volume');
    const tasks = (await docker.listTasks({ filters: { service: [SERVICE] } })) as { Status?: { State?: string } }[];
    t.ok(
      tasks.some(task => task.Status?.State === 'running'),
      'its task runs',
    );

    const ca = await readFile(caFile, 'utf8');
    t.equal(ca, await server.kernel.container.cradle.proxyRouting.provider()!.ownCaRoot!(), "the node's engine trusts the proxy's CA for this registry");
    const authorized = await new Promise<boolean>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: httpsPort, servername: host, ca }, () => {
        resolve(socket.authorized);
        socket.end();
      });
      socket.on('error', reject);
    });
    t.ok(authorized, 'the certificate the proxy serves for the registry chains to that CA');

    // An image pushed through the registry and pulled back on the engine, with the credentials per call.
    const repository = `${registryUrl}/team/busybox`;
    const original = (await docker.getImage(TEST_BASE_IMAGE).inspect()).Id;
    await docker.getImage(TEST_BASE_IMAGE).tag({ repo: repository, tag: tag });
    const follow = (stream: NodeJS.ReadableStream) =>
      new Promise<void>((resolve, reject) =>
        docker.modem.followProgress(stream, (err: Error | null, out: { error?: string }[]) => (err || out.find(o => o.error) ? reject(err ?? new Error(out.find(o => o.error)!.error)) : resolve())),
      );
    await follow(await docker.getImage(`${repository}:${tag}`).push({ authconfig: auth } as object));
    await docker.getImage(`${repository}:${tag}`).remove();
    await follow(await docker.pull(`${repository}:${tag}`, { authconfig: auth }));
    t.equal((await docker.getImage(`${repository}:${tag}`).inspect()).Id, original, 'pulled back through the registry');
    await docker.getImage(`${repository}:${tag}`).remove();

    // The check's tag, read through the proxy as any client trusting the CA would.
    const checkTags = () =>
      new Promise<{ status: number; tags: string[] }>((resolve, reject) => {
        const req = https.get(
          {
            host: '127.0.0.1',
            port: httpsPort,
            servername: host,
            ca,
            path: '/v2/berth-push-check/tags/list',
            headers: { host: registryUrl, authorization: `Basic ${Buffer.from(`owner:${PASSWORD}`).toString('base64')}` },
          },
          res => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, tags: res.statusCode === 200 ? ((JSON.parse(body) as { tags?: string[] | null }).tags ?? []) : [] }));
          },
        );
        req.on('error', reject);
      });
    t.equal((await checkTags()).status, 404, 'before the check: no such repository');
    const checked = await client.post('registry.testRegistryById', { registryId });
    t.equal(checked.status, 200, JSON.stringify(checked.body));
    t.same(await checkTags(), { status: 200, tags: [] }, "the check pushed its image and Berth deleted it over HTTPS, trusting the proxy's CA");
    const wrong = await client.post('registry.testRegistry', { registryUrl, username: 'owner', password: 'not-the-password', registryType: 'selfHosted' });
    t.equal(wrong.status, 400);
    t.match(wrong.body.message, `Login to ${registryUrl} failed`, 'its htpasswd refuses a wrong password');

    const rotate = await client.post('registry.update', { registryId, password: 'another-password' });
    t.equal(rotate.status, 400, 'its password is set when it is enabled');
    t.match(rotate.body.message, 'remove it and enable it again');
    t.equal((await client.post('registry.update', { registryId, registryName: 'ours' })).status, 200, 'its name may change');
    // A selfHosted record Berth does not run (an operator's own registry): removing it leaves Berth's alone.
    const foreign = await client.post('registry.create', { registryName: 'theirs', username: 'u', password: 'p', registryUrl, registryType: 'selfHosted' });
    t.equal((await client.post('registry.remove', { registryId: foreign.body.registryId })).status, 200);
    t.equal((await docker.listServices({ filters: { name: [SERVICE] } })).length, 1, "removing another selfHosted record leaves Berth's registry running");
    t.ok(spawnSync('test', ['-e', caFile]).status === 0, 'and its CA file');

    const again = await client.post('registry.enableSelfHostedRegistry', { registryUrl, username: 'other', password: PASSWORD });
    t.equal(again.status, 409, 'one self-hosted registry per manager');
    t.equal(spawnSync('grep', ['-rlsF', '--', PASSWORD, '/root/.docker', '/etc/docker']).stdout.toString(), '', 'no credential in /root/.docker or /etc/docker');
  });

  t.test('removing it takes its service, secret, route and the CA file away; its volume stays', async t => {
    const [registry] = (await client.get('registry.all', {})).body as { registryId: string }[];
    t.equal((await client.post('registry.remove', { registryId: registry!.registryId })).status, 200);
    t.same(await docker.listServices({ filters: { name: [SERVICE] } }), [], 'no service');
    t.same(await docker.listSecrets({ filters: { label: [`berth.registry.id=${registry!.registryId}`] } }), [], 'no secret');
    t.notOk(spawnSync('test', ['-e', caFile]).status === 0, 'no CA file');
    const res = await fetch(`https://127.0.0.1:${httpsPort}/v2/`, { headers: { host } }).catch((e: Error) => e);
    t.ok(res instanceof Error || res.status === 404, 'the proxy no longer routes the host');
    t.ok(await docker.getVolume(VOLUME).inspect(), 'the volume (the images) stays');
  });
}
