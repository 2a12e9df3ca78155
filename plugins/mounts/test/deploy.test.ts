// Mounts and published ports reach the running service: an application of the local static
// image, deployed on the real engine in swarm mode, serves the file mount's content on its
// published port and keeps what it writes in its named volume.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startTestServer, signUpAdmin, freePort, waitFor, TEST_STATIC_IMAGE, runFinished } from '@berth/core/testing';
import { runContainerCommand } from '@berth/plugin-workloads/testing';

/** `<status> <body>` of GET path on the port. */
async function get(port: number, path: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2000) });
  return `${res.status} ${await res.text()}`;
}

/** The first `<status> <body>` at path that matches, polled while the service (re)starts. */
const served = (port: number, path: string, expect: RegExp) =>
  waitFor(
    `port ${port} serving ${expect} at ${path}`,
    async () => {
      const reply = await get(port, path);
      return expect.test(reply) ? reply : undefined;
    },
    { timeout: 30_000, interval: 200 },
  );

t.setTimeout(300_000);

t.test('a deployed application serves its file mount on its published port', async t => {
  const server = await startTestServer({});
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const docker = await server.kernel.container.cradle.hosts.local();

  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Mounted' });
  const app = (await client.post('application.create', { name: 'site', environmentId: environment.environmentId })).body;
  const volumeName = `mounts-e2e-${randomBytes(4).toString('hex')}`;
  t.teardown(async () => {
    await docker
      .getService(app.appName)
      .remove()
      .catch(() => {});
    // The volume is in use until the service's last container is gone.
    await waitFor(
      `volume ${volumeName} removed`,
      () =>
        docker
          .getVolume(volumeName)
          .remove()
          .then(
            () => true,
            (e: { statusCode?: number }) => e.statusCode === 404,
          ),
      { timeout: 30_000, interval: 250 },
    );
  });
  t.equal((await client.post('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_STATIC_IMAGE })).status, 200);

  const page = await client.post('mounts.create', { serviceId: app.applicationId, type: 'file', content: '<h1>from a file mount</h1>\n', mountPath: '/www/index.html' });
  t.equal(page.status, 200);
  t.equal((await client.post('mounts.create', { serviceId: app.applicationId, type: 'volume', volumeName, mountPath: '/www/data' })).status, 200);
  const port = await freePort();
  const published = await client.post('port.create', { applicationId: app.applicationId, publishedPort: port, targetPort: 80, publishMode: 'host' });
  t.equal(published.status, 200);

  t.match(await runFinished(client, 'application.deploy', { applicationId: app.applicationId }), { status: 'done' });
  t.equal(await served(port, '/', /from a file mount/), '200 <h1>from a file mount</h1>\n', "the file mount's content, on the published port");

  const spec = (await docker.getService(app.appName).inspect()).Spec.TaskTemplate.ContainerSpec;
  const volume = spec.Mounts.find((m: { Target: string }) => m.Target === '/www/data');
  t.match(volume, { Type: 'volume', Source: volumeName }, 'the named volume is mounted');

  // Something the container keeps in its volume outlives the container.
  const [task] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${app.appName}`] } });
  t.ok(task, 'a running task');
  const write = await runContainerCommand(docker, task!.Id, { cmd: ['sh', '-c', 'cat > /www/data/note.txt'] }, Buffer.from('kept\n'));
  t.equal(write.exitCode, 0, write.stderr);
  t.equal(await get(port, '/data/note.txt'), '200 kept\n', 'served from the volume');

  // A changed mount takes effect at the next deployment.
  t.equal((await client.post('mounts.update', { mountId: page.body.mountId, content: '<h1>changed</h1>\n' })).status, 200);
  t.match(await runFinished(client, 'application.deploy', { applicationId: app.applicationId }), { status: 'done' });
  t.equal(await served(port, '/', /changed/), '200 <h1>changed</h1>\n', 'the new content is served');
  // The host port allows one task at a time: the new task is the one answering now.
  t.equal(await get(port, '/data/note.txt'), '200 kept\n', 'the volume kept its data across the redeploy');
});
