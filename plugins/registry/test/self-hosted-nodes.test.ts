// registry.enableSelfHostedRegistry across a server's nodes, for real: two kit hosts (their own
// address, /etc, /root, dockerd and sshd) added as servers, the registry (berth-test/registry:1,
// Debian's docker-registry) enabled on the first, its route through that server's own proxy (Caddy,
// with its own CA), the second joined to the first's swarm by cluster.joinServer. The registry's
// host name resolves on each host through a line of its own /etc/hosts (the manager's address), so
// each engine reaches it by name over TLS, trusting the CA file Berth wrote. A node in the swarm when
// the registry is enabled, and one that joins afterwards, both trust it (a node removed loses the
// file); an application built on the manager is pushed through it and runs on the worker; removing
// it leaves no CA file and no credential on either host.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import Docker from 'dockerode';
import { canRun, freePort, makeGitRepo, runFinished, signUpAdmin, startTestServer, waitFor, TEST_BASE_IMAGE, TEST_CADDY_IMAGE, TEST_REGISTRY_IMAGE } from '@berth/core/testing';
import { inHost, loadImage, remoteHostsMissing, type RemoteHost } from '@berth/test/remote-hosts';
import { credentialsOn, hostPair, joinWorker, serversOf } from './two-nodes.ts';

t.setTimeout(600_000);
const imageMissing =
  spawnSync('docker', ['image', 'inspect', TEST_REGISTRY_IMAGE], { stdio: 'ignore' }).status === 0 ? undefined : `${TEST_REGISTRY_IMAGE} is missing (scripts/db-images.sh builds it)`;

if (canRun(t, 'remote-hosts', remoteHostsMissing()) && canRun(t, 'registry image', imageMissing)) {
  // Hosts 9 and 10 of the run: this file alone changes their swarm membership.
  const { m, w } = await hostPair(t, 9);
  await loadImage(m, TEST_BASE_IMAGE);
  const manager = new Docker({ socketPath: m.socket });
  const worker = new Docker({ socketPath: w.socket });

  const tag = randomBytes(3).toString('hex');
  const PASSWORD = `nodes-self-hosted-${randomBytes(8).toString('hex')}`;
  const PROXY = `berth-test-proxy-${tag}`;
  const httpsPort = await freePort();
  const host = `registry-${tag}.berth.test`;
  const registryUrl = `${host}:${httpsPort}`;
  const certFile = `/etc/docker/certs.d/${registryUrl}/ca.crt`;
  // The registry's name resolves to the manager on both hosts (their own /etc/hosts, written in place).
  const hostsLine = `${m.address} ${host}`;
  for (const h of [m, w]) {
    const added = await inHost(h, ['sh', '-c', 'printf "%s\\n" "$0" >> /etc/hosts', hostsLine]);
    if (added.code !== 0) throw new Error(`/etc/hosts of ${h.name}: ${added.stderr}`);
  }
  t.teardown(() => Promise.all([m, w].map(h => inHost(h, ['sh', '-c', 'grep -vxF "$0" /etc/hosts > /tmp/hosts.berth; cat /tmp/hosts.berth > /etc/hosts', hostsLine]))));

  const server = await startTestServer({
    deploySettleSeconds: 1,
    proxy: 'caddy',
    proxyImage: TEST_CADDY_IMAGE,
    proxyHttpPort: await freePort(),
    proxyHttpsPort: httpsPort,
    registryImage: TEST_REGISTRY_IMAGE,
    providers: { proxy: { caddy: { options: { serviceName: PROXY } } } },
    hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true },
  });
  t.teardown(async () => {
    await server.destroy();
    // What a failed run may leave on the manager: the registry, its secret, volume, the proxy.
    await manager
      .getService('berth-registry')
      .remove()
      .catch(() => undefined);
    await manager
      .getService(PROXY)
      .remove()
      .catch(() => undefined);
  });
  const { client } = await signUpAdmin(server);
  const serverOf = await serversOf(client, m);
  const [M, W] = [await serverOf(m), await serverOf(w)];
  const caOn = async (h: RemoteHost) => {
    const read = await inHost(h, ['cat', certFile]);
    return read.code === 0 ? read.stdout : null;
  };
  const proxyCa = () => server.kernel.container.cradle.proxyRouting.provider(M)!.ownCaRoot!();

  const repo = await makeGitRepo({
    Dockerfile: `FROM ${TEST_BASE_IMAGE}\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
    'index.html': 'through-the-self-hosted-registry\n',
  });
  t.teardown(() => repo.cleanup());
  const { body: project } = await client.post('project.create', { name: 'Self-hosted across nodes' });
  let registryId = '';

  t.test('enabled on a two-node swarm: the service runs on the manager, both nodes trust its CA, an image built on the manager runs on the worker', async t => {
    const workerNode = await joinWorker(client, W, M);
    const enabled = await client.post('registry.enableSelfHostedRegistry', { registryUrl, username: 'owner', password: PASSWORD, serverId: M });
    t.equal(enabled.status, 200, JSON.stringify(enabled.body));
    t.match(enabled.body, { registryType: 'selfHosted', registryUrl });
    registryId = enabled.body.registryId as string;

    const { Swarm } = (await manager.info()) as { Swarm: { NodeID: string } };
    const tasks = (await manager.listTasks({ filters: { service: ['berth-registry'], 'desired-state': ['running'] } })) as { NodeID?: string; Status?: { State?: string } }[];
    t.same(
      tasks.filter(task => task.Status?.State === 'running').map(task => task.NodeID),
      [Swarm.NodeID],
      'the registry service runs on the manager',
    );
    const ca = await proxyCa();
    t.ok(ca?.includes('BEGIN CERTIFICATE'), "the manager's proxy has a CA");
    t.equal(await caOn(m), ca, "the manager's engine trusts the proxy's CA for the registry");
    t.equal(await caOn(w), ca, "the worker's engine too");

    // An application built on the manager, pushed through the registry with its credentials, placed on the worker.
    const created = await client.post('application.create', { name: 'through', environmentId: project.environment.environmentId, serverId: M });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const { applicationId, appName } = created.body as { applicationId: string; appName: string };
    await client.post('application.saveGitProvider', { applicationId, customGitUrl: `file://${repo.dir}`, customGitBranch: 'main', customGitBuildPath: '/' });
    await client.post('application.saveBuildType', { applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile' });
    t.equal((await client.post('application.update', { applicationId, registryId, placementSwarm: { Constraints: ['node.role==worker'] } })).status, 200);
    const port = await freePort();
    t.equal((await client.post('port.create', { applicationId, publishedPort: port, targetPort: 8080, publishMode: 'host', protocol: 'tcp' })).status, 200);
    const done = await runFinished(client, 'application.deploy', { applicationId });
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
    const image = `${registryUrl}/${appName.toLowerCase()}:deploy-${String(done.deploymentId).toLowerCase()}`;
    t.match(log, `Pushed ${image}`, 'pushed through the self-hosted registry');
    t.notMatch(log, PASSWORD);
    const [service] = await manager.listServices({ filters: { label: [`berth.id=${applicationId}`] } });
    const running = ((await manager.listTasks({ filters: { service: [service!.ID] } })) as { NodeID?: string; Status?: { State?: string } }[]).filter(task => task.Status?.State === 'running');
    t.same(
      running.map(task => task.NodeID),
      [workerNode],
      'its task runs on the worker',
    );
    t.ok(
      (await worker.listImages()).some(i => (i.RepoTags ?? []).includes(image)),
      'the worker pulled it through the registry',
    );
    const answered = await waitFor(
      'the application answering on the worker',
      async () => {
        const res = await fetch(`http://${w.address}:${port}/`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
        return res?.ok ? res.text() : undefined;
      },
      { timeout: 60_000, interval: 250 },
    );
    t.equal(answered, 'through-the-self-hosted-registry\n');
    for (const h of [m, w]) t.equal(await credentialsOn(h, PASSWORD), '', `no credential in ${h.name}'s /root or /etc/docker`);
    // Its task leaves the worker, so that the worker can be removed from the swarm below.
    t.equal((await client.post('application.delete', { applicationId })).status, 200);
    await waitFor('the application service to go', async () => (await manager.listServices({ filters: { label: [`berth.id=${applicationId}`] } })).length === 0, { timeout: 60_000, interval: 250 });
    // Its container too: a worker whose engine is still stopping one may fail to leave in time (seen under load).
    await waitFor('its container on the worker to go', async () => (await worker.listContainers({ all: true, filters: { label: [`com.docker.swarm.service.name=${appName}`] } })).length === 0, {
      timeout: 60_000,
      interval: 250,
    });
  });

  t.test('a node removed by cluster.removeWorker loses the CA file; a node that joins later trusts the CA once cluster.joinServer answers', async t => {
    const nodeId = (await worker.info()).Swarm.NodeID as string;
    const removed = await client.post('cluster.removeWorker', { nodeId, serverId: M });
    t.equal(removed.status, 200, JSON.stringify(removed.body));
    t.equal(await caOn(w), null, 'the node that left the swarm no longer has the CA file');
    t.equal(await caOn(m), await proxyCa(), 'the manager keeps it');
    const rejoined = await joinWorker(client, W, M);
    t.not(rejoined, nodeId, 'a new node of the swarm');
    t.equal(await caOn(w), await proxyCa(), "the joined node's engine trusts the registry's CA as soon as the join answers");
    // Its engine reaches the registry by name over TLS: a login through the proxy succeeds there.
    const login = await worker.checkAuth({ username: 'owner', password: PASSWORD, serveraddress: registryUrl });
    t.match(login, { Status: 'Login Succeeded' }, 'the joined node logs in to the registry');
    t.equal(await credentialsOn(w, PASSWORD), '', 'a login through the engine API writes no credential');
  });

  t.test('removed: no CA file and no credential on either node', async t => {
    t.equal((await client.post('registry.remove', { registryId })).status, 200);
    t.same(await manager.listServices({ filters: { name: ['berth-registry'] } }), [], 'no registry service');
    for (const h of [m, w]) {
      t.equal(await caOn(h), null, `no CA file on ${h.name}`);
      t.equal(await credentialsOn(h, PASSWORD), '', `no credential in ${h.name}'s /root or /etc/docker`);
    }
    await manager
      .getVolume('berth-registry-data')
      .remove()
      .catch(() => undefined);
  });
}
