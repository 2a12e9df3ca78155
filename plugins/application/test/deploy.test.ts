// Applications deployed for real: a local git repository built with its Dockerfile, a
// prebuilt local image, failures, env changes, stop/start, cancel, delete, env references
// and shell metacharacters — on the real Docker engine in swarm mode, through the API.
import t from 'tap';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, makeGitRepo, commitFiles, TEST_BASE_IMAGE, TEST_STATIC_IMAGE, type Client } from '@berth/core/testing';

const docker = new Docker();
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));
const freePort = () => 20000 + Math.floor(Math.random() * 20000);

/** Waits until the deployment leaves queued/running; answers it. */
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

async function waitStatus(client: Client, deploymentId: string, status: string, ms = 30_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if ((await client.get('deployment.one', { deploymentId })).body.status === status) return;
    await sleep(100);
  }
  throw new Error(`deployment ${deploymentId} never became ${status}`);
}

/** The body served on the port, retried while the service (re)starts. */
async function served(port: number, expect?: RegExp, ms = 20_000, anyStatus = false): Promise<string> {
  const until = Date.now() + ms;
  let last = '';
  while (Date.now() < until) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) });
      last = await res.text();
      if ((res.ok || anyStatus) && (!expect || expect.test(last))) return last;
    } catch (e) {
      last = String(e);
    }
    await sleep(200);
  }
  throw new Error(`port ${port} never served ${expect ?? 'anything'}; last: ${last}`);
}

async function unreachable(port: number, ms = 20_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
    } catch {
      return true;
    }
    await sleep(200);
  }
  return false;
}

const serviceOf = (name: string) => docker.getService(name).inspect().then((s: any) => s, () => null);

// A site whose index page shows $GREETING, written when the container starts.
const site = (extra = '') => ({
  Dockerfile: `FROM ${TEST_BASE_IMAGE}\n${extra}RUN mkdir -p /www\nCMD ["sh", "-c", "echo \\"hello $GREETING\\" > /www/index.html && exec httpd -f -p 8080 -h /www"]\n`,
});

// Builds and rollouts on the engine take longer than tap's default per-file limit.
t.setTimeout(600_000);

t.test('applications on the real engine', async t => {
  const server = await startTestServer({});
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  // What notification channels will subscribe to.
  const events: { name: string; payload: Record<string, any> }[] = [];
  const bus = server.kernel.container.cradle.events;
  bus.on('appDeploy', payload => void events.push({ name: 'appDeploy', payload }));
  bus.on('appBuildError', payload => void events.push({ name: 'appBuildError', payload }));
  const { body: { project, environment } } = await client.post('project.create', { name: 'Deploys', env: 'DB_HOST=db.internal' });
  await client.post('environment.update', { environmentId: environment.environmentId, env: 'STAGE=prod' });
  const repo = await makeGitRepo(site());
  t.teardown(() => repo.cleanup());

  const apps: string[] = [];
  t.teardown(async () => {
    for (const name of apps) await docker.getService(name).remove().catch(() => undefined);
  });
  const newApp = async (name: string, port?: number) => {
    const res = await client.post('application.create', { name, environmentId: environment.environmentId });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    apps.push(res.body.appName);
    // busybox httpd as PID 1 ignores SIGTERM: give old tasks 1 s, not the default 10 s, to stop.
    await client.post('application.update', { applicationId: res.body.applicationId, stopGracePeriodSwarm: 1_000_000_000 });
    if (port) {
      const p = await client.post('port.create', { applicationId: res.body.applicationId, publishedPort: port, targetPort: 8080, publishMode: 'host', protocol: 'tcp' });
      if (p.status !== 200) throw new Error(JSON.stringify(p.body));
    }
    return res.body as { applicationId: string; appName: string };
  };
  const deploy = async (applicationId: string, op = 'application.deploy') => {
    const res = await client.post(op, { applicationId });
    if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { deploymentId: string; status: string };
  };
  const logOf = async (deploymentId: string) => (await client.get('deployment.readLogs', { deploymentId })).body as string;
  const statusOf = async (applicationId: string) => (await client.get('application.one', { applicationId })).body.applicationStatus;

  const port = freePort();
  const web = await newApp('web', port);

  t.test('git source + Dockerfile: deploy answers the queued deployment, then the container serves', async t => {
    await client.post('application.saveGitProvider', { applicationId: web.applicationId, customGitUrl: `file://${repo.dir}`, customGitBranch: 'main', customGitBuildPath: '/' });
    await client.post('application.saveBuildType', { applicationId: web.applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile' });
    await client.post('application.saveEnvironment', { applicationId: web.applicationId, env: 'GREETING=world-1\nAPI_TOKEN=very-secret-token-1' });
    const queued = await deploy(web.applicationId);
    t.match(queued, { deploymentId: String, status: /queued|running/ });
    const done = await finished(client, queued.deploymentId);
    t.equal(done.status, 'done', done.errorMessage ?? '');
    t.equal(await statusOf(web.applicationId), 'done');
    t.equal((await served(port, /world-1/)).trim(), 'hello world-1');
    const log = await logOf(queued.deploymentId);
    t.match(log, new RegExp(repo.commit.slice(0, 7)), 'the log names the fetched commit');
    t.notMatch(log, /very-secret-token-1/, 'env values never reach the log');
    const one = await client.get('application.one', { applicationId: web.applicationId });
    t.equal(one.body.deployments[0].deploymentId, queued.deploymentId, 'one lists the deployment');
    t.equal(one.body.ports[0].publishedPort, port);
    const svc = await serviceOf(web.appName);
    t.equal(svc.Spec.Labels['berth.id'], web.applicationId);
    t.match(svc.Spec.TaskTemplate.ContainerSpec.Image, new RegExp(`^berth/${web.appName}:deploy-`), 'the built image is tagged by its deployment (a valid tag whatever the id starts with)');
    t.match(events.find(e => e.name === 'appDeploy')?.payload, { applicationId: web.applicationId, deploymentId: queued.deploymentId, appName: web.appName, action: 'deploy' }, 'appDeploy was emitted');
  });

  t.test('redeploy with a changed env serves the new value', async t => {
    await client.post('application.saveEnvironment', { applicationId: web.applicationId, env: 'GREETING=world-2' });
    const done = await finished(client, (await deploy(web.applicationId, 'application.redeploy')).deploymentId);
    t.equal(done.status, 'done', done.errorMessage ?? '');
    t.equal((await served(port, /world-2/)).trim(), 'hello world-2');
  });

  t.test('a failing build ends in error with the build error in the log; the previous version keeps serving', async t => {
    await commitFiles(repo.dir, site('RUN echo building-step && exit 3\n'));
    const failed = await finished(client, (await deploy(web.applicationId)).deploymentId);
    t.equal(failed.status, 'error');
    t.ok(failed.errorMessage);
    t.match(await logOf(failed.deploymentId), /exit 3|returned a non-zero code: 3/);
    t.equal(await statusOf(web.applicationId), 'error');
    t.match(events.find(e => e.name === 'appBuildError')?.payload, { applicationId: web.applicationId, deploymentId: failed.deploymentId, error: String }, 'appBuildError was emitted');
    t.equal((await served(port)).trim(), 'hello world-2', 'the running version is untouched');
    await commitFiles(repo.dir, site());
  });

  t.test('stop scales to zero (idle); start brings it back (done)', async t => {
    const stopped = await finished(client, (await deploy(web.applicationId, 'application.stop')).deploymentId);
    t.equal(stopped.status, 'done', stopped.errorMessage ?? '');
    t.equal(await statusOf(web.applicationId), 'idle');
    t.equal((await serviceOf(web.appName)).Spec.Mode.Replicated.Replicas, 0);
    t.ok(await unreachable(port), 'nothing answers');
    const started = await finished(client, (await deploy(web.applicationId, 'application.start')).deploymentId);
    t.equal(started.status, 'done', started.errorMessage ?? '');
    t.equal(await statusOf(web.applicationId), 'done');
    t.equal((await served(port)).trim(), 'hello world-2');
  });

  t.test('reload restarts the tasks with the same spec', async t => {
    const before = (await serviceOf(web.appName)).Spec.TaskTemplate.ForceUpdate ?? 0;
    const reloaded = await finished(client, (await client.post('application.reload', { applicationId: web.applicationId, appName: web.appName })).body.deploymentId);
    t.equal(reloaded.status, 'done', reloaded.errorMessage ?? '');
    t.ok((await serviceOf(web.appName)).Spec.TaskTemplate.ForceUpdate > before);
    t.equal((await served(port)).trim(), 'hello world-2');
  });

  t.test('readLogs answers the container output', async t => {
    const res = await client.get('application.readLogs', { applicationId: web.applicationId, tail: 50 });
    t.equal(res.status, 200);
    t.type(res.body, 'string');
  });

  t.test('a prebuilt local image deploys; the log says it was not pulled', async t => {
    const staticPort = freePort();
    const app = await newApp('prebuilt', staticPort);
    const p = await client.get('application.one', { applicationId: app.applicationId });
    await client.post('port.update', { portId: p.body.ports[0].portId, publishedPort: staticPort, targetPort: 80, publishMode: 'host', protocol: 'tcp' });
    await client.post('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_STATIC_IMAGE, username: 'robot', password: 'registry-password-77' });
    const done = await finished(client, (await deploy(app.applicationId)).deploymentId);
    t.equal(done.status, 'done', done.errorMessage ?? '');
    const log = await logOf(done.deploymentId);
    t.match(log, /Could not pull .*copy this host already has/);
    t.notMatch(log, /registry-password-77/);
    // The image's web server answers (its root is empty here, so with a 404 page of its own).
    t.match(await served(staticPort, /Not Found/, 20_000, true), /404 Not Found/);
  });

  t.test('env references are resolved; a missing one fails the deploy naming it', async t => {
    const refPort = freePort();
    const app = await newApp('refs', refPort);
    await client.post('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: `file://${repo.dir}`, customGitBranch: 'main' });
    await client.post('application.saveBuildType', { applicationId: app.applicationId, buildType: 'dockerfile' });
    await client.post('application.saveEnvironment', { applicationId: app.applicationId, env: 'HOST=${{project.DB_HOST}}\nGREETING=${{HOST}}-${{environment.STAGE}}' });
    const done = await finished(client, (await deploy(app.applicationId)).deploymentId);
    t.equal(done.status, 'done', done.errorMessage ?? '');
    t.equal((await served(refPort, /db\.internal/)).trim(), 'hello db.internal-prod');
    await client.post('application.saveEnvironment', { applicationId: app.applicationId, env: 'GREETING=${{project.MISSING_KEY}}' });
    const failed = await finished(client, (await deploy(app.applicationId)).deploymentId);
    t.equal(failed.status, 'error');
    t.match(failed.errorMessage, /project\.MISSING_KEY/);
    t.equal((await served(refPort)).trim(), 'hello db.internal-prod', 'the previous version keeps serving');
  });

  t.test('cancelDeployment stops a long build: cancelled, and the app is not left running', async t => {
    const slow = await makeGitRepo(site('RUN sleep 120\n'));
    t.teardown(() => slow.cleanup());
    const app = await newApp('slow');
    await client.post('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl: `file://${slow.dir}`, customGitBranch: 'main' });
    await client.post('application.saveBuildType', { applicationId: app.applicationId, buildType: 'dockerfile' });
    const queued = await deploy(app.applicationId);
    await waitStatus(client, queued.deploymentId, 'running');
    await sleep(1500);
    const started = Date.now();
    t.equal((await client.post('application.cancelDeployment', { applicationId: app.applicationId })).status, 200);
    const ended = await finished(client, queued.deploymentId, 30_000);
    t.equal(ended.status, 'cancelled');
    t.ok(Date.now() - started < 20_000, 'stopped promptly');
    t.not(await statusOf(app.applicationId), 'running');
  });

  t.test('shell metacharacters in every string field never reach a shell', async t => {
    const marker = path.join(server.dataDir, 'pwned');
    const evil = `$(touch ${marker}); touch ${marker} \`touch ${marker}\` | touch ${marker} && touch ${marker}`;
    const app = await newApp('evil');
    const fields = {
      name: evil, description: evil, command: evil, dockerfile: evil, dockerContextPath: evil, dockerBuildStage: evil, publishDirectory: evil,
      customGitUrl: evil, customGitBuildPath: evil, dockerImage: evil, username: evil, password: evil, registryUrl: evil,
      env: `GREETING=${evil}`, buildArgs: `X=${evil}`, title: evil,
    };
    const up = await client.post('application.update', { applicationId: app.applicationId, ...fields, sourceType: 'git', buildType: 'dockerfile' });
    t.equal(up.status, 200, 'stored literally');
    const asGit = await finished(client, (await deploy(app.applicationId)).deploymentId);
    t.equal(asGit.status, 'error', 'the git source is refused cleanly');
    await client.post('application.update', { applicationId: app.applicationId, sourceType: 'docker' });
    const asImage = await finished(client, (await deploy(app.applicationId)).deploymentId);
    t.equal(asImage.status, 'error', 'the image reference is refused cleanly');
    const badAppName = await client.post('application.update', { applicationId: app.applicationId, appName: 'x;touch /tmp/y' });
    t.equal(badAppName.status, 400);
    t.notOk(existsSync(marker), 'no shell ran anything');
  });

  t.test('delete removes the service, the work dir and the records', async t => {
    const deployments = (await client.get('deployment.all', { applicationId: web.applicationId })).body as { deploymentId: string }[];
    t.ok(deployments.length >= 4);
    const del = await client.post('application.delete', { applicationId: web.applicationId });
    t.equal(del.status, 200);
    t.equal(await serviceOf(web.appName), null, 'the service is gone');
    t.notOk(existsSync(path.join(server.dataDir, 'applications', web.appName)), 'its directory is gone');
    t.equal((await client.get('deployment.one', { deploymentId: deployments[0]!.deploymentId })).status, 404, 'its deployments are gone');
    const builds = path.join(server.dataDir, 'builds');
    t.same(existsSync(builds) ? await readdir(builds) : [], [], 'no build work dir is left behind');
    t.equal((await client.get('application.one', { applicationId: web.applicationId })).status, 404);
    t.ok(await unreachable(port));
    void project;
  });
});
