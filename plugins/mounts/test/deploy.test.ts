// Mounts and published ports reach the running service: an application of the local static
// image, deployed on the real engine in swarm mode, serves the file mount's content on its
// published port and keeps what it writes in its named volume.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startTestServer, signUpAdmin, TEST_STATIC_IMAGE, type Client } from '@berth/core/testing';

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));
const freePort = () => 20000 + Math.floor(Math.random() * 20000);

async function finished(client: Client, deploymentId: string, ms = 90_000): Promise<Record<string, any>> {
  const until = Date.now() + ms;
  for (;;) {
    const res = await client.get('deployment.one', { deploymentId });
    if (res.status !== 200) throw new Error(`deployment.one ${res.status}: ${JSON.stringify(res.body)}`);
    if (!['queued', 'running'].includes(res.body.status)) return res.body;
    if (Date.now() > until) throw new Error(`deployment ${deploymentId} still ${res.body.status}`);
    await sleep(200);
  }
}

/** The body served at path on the port, retried while the service (re)starts. */
async function served(port: number, path: string, expect: RegExp, ms = 30_000): Promise<string> {
  const until = Date.now() + ms;
  let last = '';
  while (Date.now() < until) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2000) });
      last = `${res.status} ${await res.text()}`;
      if (res.ok && expect.test(last)) return last;
    } catch (e) {
      last = String(e);
    }
    await sleep(200);
  }
  throw new Error(`port ${port} never served ${expect} at ${path}; last: ${last}`);
}

t.setTimeout(300_000);

t.test('a deployed application serves its file mount on its published port', async t => {
  const server = await startTestServer({});
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const docker = await server.kernel.container.cradle.hosts.local();

  const { body: { environment } } = await client.post('project.create', { name: 'Mounted' });
  const app = (await client.post('application.create', { name: 'site', environmentId: environment.environmentId })).body;
  const volumeName = `mounts-e2e-${randomBytes(4).toString('hex')}`;
  t.teardown(async () => {
    await docker.getService(app.appName).remove().catch(() => {});
    for (let i = 0; i < 120; i++) {
      if (await docker.getVolume(volumeName).remove().then(() => true, (e: { statusCode?: number }) => e.statusCode === 404)) return;
      await sleep(250);
    }
  });
  t.equal((await client.post('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_STATIC_IMAGE })).status, 200);

  const page = await client.post('mounts.create', { serviceId: app.applicationId, type: 'file', content: '<h1>from a file mount</h1>\n', mountPath: '/www/index.html' });
  t.equal(page.status, 200);
  t.equal((await client.post('mounts.create', { serviceId: app.applicationId, type: 'volume', volumeName, mountPath: '/www/data' })).status, 200);
  const port = freePort();
  const published = await client.post('port.create', { applicationId: app.applicationId, publishedPort: port, targetPort: 80, publishMode: 'host' });
  t.equal(published.status, 200);

  const first = await client.post('application.deploy', { applicationId: app.applicationId });
  t.equal(first.status, 200);
  t.match(await finished(client, first.body.deploymentId), { status: 'done' });
  t.match(await served(port, '/', /from a file mount/), /^200 <h1>from a file mount<\/h1>/, 'the file mount\'s content, on the published port');

  const spec = (await docker.getService(app.appName).inspect()).Spec.TaskTemplate.ContainerSpec;
  const volume = spec.Mounts.find((m: { Target: string }) => m.Target === '/www/data');
  t.match(volume, { Type: 'volume', Source: volumeName }, 'the named volume is mounted');

  // Something the container keeps in its volume outlives the container.
  const [task] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${app.appName}`] } });
  t.ok(task, 'a running task');
  const exec = await docker.getContainer(task!.Id).exec({ Cmd: ['sh', '-c', 'echo kept > /www/data/note.txt'], AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({});
  await new Promise(resolve => { stream.on('end', resolve); stream.resume(); });
  t.match(await served(port, '/data/note.txt', /kept/), /kept/);

  // A changed mount takes effect at the next deployment.
  t.equal((await client.post('mounts.update', { mountId: page.body.mountId, content: '<h1>changed</h1>\n' })).status, 200);
  const second = await client.post('application.deploy', { applicationId: app.applicationId });
  t.match(await finished(client, second.body.deploymentId), { status: 'done' });
  t.match(await served(port, '/', /changed/), /changed/, 'the new content is served');
  t.match(await served(port, '/data/note.txt', /kept/), /kept/, 'the volume kept its data across the redeploy');
});
