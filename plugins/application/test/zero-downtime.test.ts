// Redeploys that no client notices (issue 51): an application without a health check, behind a
// domain on the real Caddy (the caddy provider's Swarm service, Debian's 2.6), gets new releases
// while a client sends it steady keep-alive load through the proxy; not one request may fail or
// answer other than 200, and every release must be what answers after its deploy (the body names
// it). Mechanism: start-first updates (the old task leaves DNS 2 s before its SIGTERM) and Caddy
// trying a refused dial again on a task found then. bench/deploy-load.ts measures the same at 200
// requests/s over 20 deploys.
import t from 'tap';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, freePort, waitFor, runFinished, TEST_BASE_IMAGE, TEST_CADDY_IMAGE } from '@berth/core/testing';

t.setTimeout(300_000);
const docker = new Docker();
const PROXY = `berth-test-proxy-${randomBytes(3).toString('hex')}`;
const RELEASES = 3;
const RATE = 100;
// Serves "release $RELEASE", listening 1 s after its start (an app that boots: its task is in DNS
// before it listens); on SIGTERM it serves 1 s more, then stops (an app that drains).
const SITE = 'mkdir -p /www && echo "release $RELEASE" > /www/index.html && sleep 1 && httpd -f -p 3000 -h /www & pid=$!; trap "sleep 1; kill $pid; exit 0" TERM; wait';

interface Answer {
  at: number;
  status: number;
  error: string | null;
  body: string;
}

/** GET / with the Host header every 1000/RATE ms over keep-alive sockets, until stopped; every answer kept. */
function steadyLoad(port: number, host: string) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const answers: Answer[] = [];
  let pending = 0;
  const send = () => {
    const at = Date.now();
    pending++;
    const done = (a: Omit<Answer, 'at'>) => {
      pending--;
      answers.push({ at, ...a });
    };
    const req = http.get({ host: '127.0.0.1', port, path: '/', headers: { host }, agent, timeout: 10_000 }, res => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', c => (body += c));
      res.on('end', () => done({ status: res.statusCode ?? 0, error: null, body: body.trim() }));
      res.on('error', e => done({ status: res.statusCode ?? 0, error: String(e), body }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', e => done({ status: 0, error: (e as NodeJS.ErrnoException).code ?? e.message, body: '' }));
  };
  const timer = setInterval(send, 1000 / RATE);
  return {
    answers,
    async stop() {
      clearInterval(timer);
      await waitFor('the last answers', async () => (pending === 0 ? true : undefined), { timeout: 15_000, interval: 50 });
      agent.destroy();
    },
  };
}

t.test('redeploys under steady load through Caddy fail no request', async t => {
  const httpPort = await freePort();
  const server = await startTestServer({
    proxy: 'caddy',
    proxyImage: TEST_CADDY_IMAGE,
    proxyHttpPort: httpPort,
    proxyHttpsPort: await freePort(),
    deploySettleSeconds: 1,
    providers: { proxy: { caddy: { options: { serviceName: PROXY } } } },
  });
  const services = [PROXY];
  t.teardown(async () => {
    for (const name of services)
      await docker
        .getService(name)
        .remove()
        .catch(() => undefined);
    await server.destroy();
  });
  const { client } = await signUpAdmin(server);
  const call = async (op: string, input: Record<string, unknown>) => {
    const res = await client.post(op, input);
    if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const { environment } = await call('project.create', { name: 'Steady' });
  const app = await call('application.create', { name: 'steady', environmentId: environment.environmentId });
  const { applicationId } = app;
  services.push(app.appName);
  // No health check: the default path, where the new task is in DNS before its app listens.
  await call('application.update', { applicationId, command: 'sh', args: ['-c', SITE], stopGracePeriodSwarm: 3_000_000_000 });
  await call('application.saveDockerProvider', { applicationId, dockerImage: TEST_BASE_IMAGE });
  await call('application.saveEnvironment', { applicationId, env: 'RELEASE=0' });
  const host = 'steady.test';
  await call('domain.create', { host, applicationId, port: 3000 });
  const first = await runFinished(client, 'application.deploy', { applicationId });
  t.equal(first.status, 'done', first.errorMessage ?? 'the first release runs');

  const load = steadyLoad(httpPort, host);
  await waitFor('release 0 through Caddy', async () => (load.answers.some(a => a.body === 'release 0') ? true : undefined), { timeout: 30_000, interval: 100 });
  const from = load.answers.length; // answers before the proxy first served the domain are not the deploys'
  for (let release = 1; release <= RELEASES; release++) {
    await call('application.saveEnvironment', { applicationId, env: `RELEASE=${release}` });
    const started = Date.now();
    const done = await runFinished(client, 'application.deploy', { applicationId });
    t.equal(done.status, 'done', done.errorMessage ?? `release ${release} deployed`);
    if (release === 1) {
      const log = (await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body as string;
      t.match(log, /Update order start-first: the new task starts beside the old one/, 'the deploy log says how the tasks are replaced');
    }
    await waitFor(`release ${release} answering`, async () => (load.answers.some(a => a.at >= started && a.body === `release ${release}`) ? true : undefined), { timeout: 30_000, interval: 100 });
    // The old task leaves after the new one runs: keep the load on until it is gone.
    await waitFor(
      `release ${release - 1} stopped`,
      async () => ((await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${app.appName}`] } })).length === 1 ? true : undefined),
      { timeout: 30_000, interval: 200 },
    );
    await sleep(500);
  }
  await load.stop();

  const during = load.answers.slice(from);
  const failed = during.filter(a => a.error !== null || a.status !== 200);
  t.ok(during.length > RATE * 5, `steady load ran (${during.length} requests)`);
  t.same(
    failed.slice(0, 5).map(a => a.error ?? `${a.status} ${a.body.slice(0, 80)}`),
    [],
    `no request failed over ${RELEASES} redeploys (${failed.length} of ${during.length} failed)`,
  );
  const last = during.filter(a => a.at >= during.at(-1)!.at - 500);
  t.ok(
    last.every(a => a.body === `release ${RELEASES}`),
    'the last release alone answers at the end',
  );
});
