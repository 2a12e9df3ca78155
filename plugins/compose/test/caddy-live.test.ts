// A compose service reached through the real proxy by its domain: Caddy (built locally) runs as
// the caddy provider's Swarm service; both compose types deploy a web service that publishes no
// port, the deploy joins it to the platform network, and the proxy answers for its domain
// (docker-compose: the service's network alias; stack: tasks.<stack>_<service>).
import t from 'tap';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, deploymentIdOf, deploymentFinished, freePort, waitFor, TEST_BASE_IMAGE, TEST_CADDY_IMAGE } from '@berth/core/testing';

t.setTimeout(600_000);
const docker = new Docker();
const PROXY = `berth-test-proxy-${randomBytes(3).toString('hex')}`;

/** Status and body of GET / on the proxy's port for a Host. */
const through = (port: number, host: string) =>
  new Promise<{ status: number; body: string } | undefined>(resolve => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', headers: { Host: host }, timeout: 3000 }, res => {
      let body = '';
      res.on('data', c => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => req.destroy());
  });

const file = (message: string) => `services:
  web:
    image: ${TEST_BASE_IMAGE}
    init: true
    stop_grace_period: 1s
    command: ["sh", "-c", "mkdir -p /www && echo ${message} > /www/index.html && exec httpd -f -p 3000 -h /www"]
  idle:
    image: ${TEST_BASE_IMAGE}
    init: true
    stop_grace_period: 1s
    command: ["sleep", "3600"]
`;

t.test('compose services through Caddy, live', async t => {
  const httpPort = await freePort();
  const httpsPort = await freePort();
  const server = await startTestServer({
    proxy: 'caddy',
    proxyImage: TEST_CADDY_IMAGE,
    proxyHttpPort: httpPort,
    proxyHttpsPort: httpsPort,
    deploySettleSeconds: 1,
    providers: { proxy: { caddy: { options: { serviceName: PROXY } } } },
  });
  t.teardown(async () => {
    await docker
      .getService(PROXY)
      .remove()
      .catch(() => undefined);
    await server.destroy();
  });
  const { client } = await signUpAdmin(server);
  const {
    body: { environment },
  } = await client.post('project.create', { name: 'Proxied' });

  for (const type of ['docker-compose', 'stack'] as const) {
    t.test(`${type}: the domain answers from the service`, async t => {
      const host = `${type}.compose.test`;
      const message = `served-by-${type}`;
      const { body: stack } = await client.post('compose.create', { name: `proxied ${type}`, environmentId: environment.environmentId, composeType: type, composeFile: file(message) });
      t.teardown(() => client.post('compose.delete', { composeId: stack.composeId, deleteVolumes: true }));
      const domain = await client.post('domain.create', { host, port: 3000, composeId: stack.composeId, serviceName: 'web', domainType: 'compose' });
      t.equal(domain.status, 200, JSON.stringify(domain.body));
      const done = await deploymentFinished(client, deploymentIdOf(await client.post('compose.deploy', { composeId: stack.composeId })));
      t.equal(done.status, 'done', done.errorMessage ?? 'deployed');
      const log = (await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body as string;
      t.match(log, new RegExp(`Domain ${host.replace(/\./g, '\\.')}: service web is on berth-network`), 'the deploy checks the proxy reaches the service');
      const answer = await waitFor(
        `${host} through the proxy`,
        async () => {
          const a = await through(httpPort, host);
          return a?.status === 200 ? a : undefined;
        },
        { timeout: 60_000, interval: 250 },
      );
      t.equal(answer.body.trim(), message, 'the compose service answers by its domain');
    });
  }
});
