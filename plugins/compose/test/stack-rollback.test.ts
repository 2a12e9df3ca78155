// A stack goes back as a whole (issue 51): a release in which one service fails brings every
// service it changed back to its previous spec — the failing one (Swarm's own rollback) and the
// healthy one beside it (Berth's) — so the stack serves its previous release, and the deployment
// ends error saying so. On the real engine, through the API.
import t from 'tap';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, deploymentFinished, deploymentIdOf, freePort, waitFor, TEST_BASE_IMAGE } from '@berth/core/testing';

const docker = new Docker();
t.setTimeout(300_000);

/** web serves "release <name>" on the port; worker runs (or, broken, exits at once). */
const stackFile = (port: number, release: string, brokenWorker = false) => `services:
  web:
    image: ${TEST_BASE_IMAGE}
    init: true
    stop_grace_period: 1s
    environment:
      RELEASE: ${release}
    command: ["sh", "-c", "mkdir -p /www && echo \\"release $$RELEASE\\" > /www/index.html && exec httpd -f -p 8080 -h /www"]
    ports:
      - target: 8080
        published: ${port}
        mode: host
  worker:
    image: ${TEST_BASE_IMAGE}
    init: true
    stop_grace_period: 1s
    environment:
      RELEASE: ${release}
    command: ${brokenWorker ? '["sh", "-c", "exit 3"]' : '["sleep", "3600"]'}
`;

const page = async (port: number) => {
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
  return res?.ok ? (await res.text()).trim() : undefined;
};

/** The RELEASE a stack service's spec sets now. */
const releaseOf = async (name: string) => {
  const { Spec } = await docker.getService(name).inspect();
  return ((Spec.TaskTemplate.ContainerSpec.Env ?? []) as string[]).find(e => e.startsWith('RELEASE='))?.slice('RELEASE='.length);
};

t.test('a stack release with a failing service is rolled back as a whole', async t => {
  const server = await startTestServer({ deploySettleSeconds: 1 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Stack rollback' });
  const port = await freePort();
  const appName = `stk-rb-${Date.now().toString(36)}`;
  const created = await client.post('compose.create', { name: 'stack', appName, environmentId: environment.environmentId, composeType: 'stack', composeFile: stackFile(port, 'one') });
  t.equal(created.status, 200, JSON.stringify(created.body));
  const { composeId } = created.body;
  t.teardown(() => client.post('compose.delete', { composeId, deleteVolumes: true }));
  const deploy = async () => deploymentFinished(client, deploymentIdOf(await client.post('compose.deploy', { composeId })), { timeout: 180_000 });

  const first = await deploy();
  t.equal(first.state, 'done', first.errorMessage ?? 'release one deployed');
  const web = `${appName}_web`;
  const worker = `${appName}_worker`;
  await waitFor('release one served', async () => ((await page(port)) === 'release one' ? true : undefined), { timeout: 30_000, interval: 200 });

  // Release two: web would serve "release two", but the worker exits at once.
  t.equal((await client.post('compose.update', { composeId, composeFile: stackFile(port, 'two', true) })).status, 200);
  const second = await deploy();
  t.equal(second.state, 'error', 'the release with a failing service fails');
  t.match(second.errorMessage, /rolled back to its previous release/);
  const log = (await client.get('deployment.readLogs', { deploymentId: second.deploymentId })).body as string;
  t.match(log, /Rolled back: .*_web/, 'the log names the healthy service it sent back too');
  t.match(log, /Rolled back: .*_worker/, 'and the failing one Swarm sent back');
  t.notMatch(log, /new in this release/, 'no service of the stack is new in release two');

  // Both services run release one's spec again, and web serves it.
  t.equal(await releaseOf(web), 'one', "web's spec went back with the worker's");
  t.equal(await releaseOf(worker), 'one', "the worker's spec went back");
  await waitFor('release one served again', async () => ((await page(port)) === 'release one' ? true : undefined), { timeout: 60_000, interval: 200 });
  await waitFor(
    'the worker running again',
    async () => {
      const tasks = (await docker.listTasks({ filters: JSON.stringify({ service: [worker], 'desired-state': ['running'] }) })) as { Status?: { State?: string } }[];
      return tasks.some(task => task.Status?.State === 'running') ? true : undefined;
    },
    { timeout: 60_000, interval: 250 },
  );
  t.equal((await client.get('compose.one', { composeId })).body.composeStatus, 'error', 'the stack says its last deploy failed');

  // Positive control: a good release two deploys and serves.
  t.equal((await client.post('compose.update', { composeId, composeFile: stackFile(port, 'two') })).status, 200);
  t.equal((await deploy()).state, 'done');
  await waitFor('release two served', async () => ((await page(port)) === 'release two' ? true : undefined), { timeout: 30_000, interval: 200 });
  t.equal(await releaseOf(web), 'two');
});
