// Images across the nodes of a swarm, for real: two kit hosts (their own address, /etc, /root,
// dockerd and sshd) added as servers, the second joined to the first's swarm as a worker by
// cluster.joinServer, and a real registry (Debian's docker-registry, TLS and htpasswd) on this
// machine's address on the hosts' network, whose CA both hosts trust. An application built on the
// manager and pushed there runs on the worker; without a registry the pull check names the worker
// before any task is created, and the version that runs keeps running.
import t, { type Test } from 'tap';
import Docker from 'dockerode';
import { canRun, freePort, makeGitRepo, runFinished, signUpAdmin, startTestServer, waitFor, TEST_BASE_IMAGE } from '@berth/core/testing';
import { inHost, loadImage, remoteHostsMissing, type RemoteHost } from '@berth/test/remote-hosts';
import { registryMissing, startTlsRegistry } from './local-registry.ts';
import { credentialsOn as credentialsOnHost, hostPair, joinWorker, serversOf } from './two-nodes.ts';

t.setTimeout(600_000);

if (canRun(t, 'remote-hosts', remoteHostsMissing()) && canRun(t, 'docker-registry', registryMissing())) {
  // Hosts 5 and 6 of the run: this file alone changes their swarm membership.
  const { set, m, w } = await hostPair(t, 5);
  const b = set.hosts[0]!; // the build server: the run's first host, which other files deploy to alone
  await loadImage(m, TEST_BASE_IMAGE);
  const manager = new Docker({ socketPath: m.socket });
  const worker = new Docker({ socketPath: w.socket });
  const PASSWORD = 'nodes-pw-' + Math.random().toString(36).slice(2);
  const registry = await startTlsRegistry(set.gateway, { pusher: PASSWORD });
  t.teardown(() => registry.stop());
  // What an operator (or enableSelfHostedRegistry) does on each node: trust the registry's CA.
  const certDir = `/etc/docker/certs.d/${registry.url}`;
  for (const h of [m, w, b]) {
    const trusted = await inHost(h, ['sh', '-c', `mkdir -p "$0" && cat > "$0/ca.crt"`, certDir], registry.ca);
    if (trusted.code !== 0) throw new Error(`writing the CA on ${h.name}: ${trusted.stderr}`);
  }
  t.teardown(() => Promise.all([m, w, b].map(h => inHost(h, ['rm', '-rf', certDir]))));

  const server = await startTestServer({ deploySettleSeconds: 1, proxy: 'none', hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true } });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const serverOf = await serversOf(client, m);
  const [M, W, B] = [await serverOf(m), await serverOf(w), await serverOf(b, 'build')];
  await joinWorker(client, W, M);
  const reg = await client.post('registry.create', { registryName: 'hosts network', username: 'pusher', password: PASSWORD, registryUrl: registry.url, registryType: 'cloud', imagePrefix: 'nodes' });
  const REGISTRY = reg.body.registryId as string;
  const credentialsOn = (h: RemoteHost) => credentialsOnHost(h, PASSWORD.slice(0, 14));

  const repo = await makeGitRepo({ Dockerfile: `FROM ${TEST_BASE_IMAGE}\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`, 'index.html': 'from-the-worker\n' });
  t.teardown(() => repo.cleanup());
  const { body: project } = await client.post('project.create', { name: 'Two nodes' });

  /** An application on the manager, built from the repository, placed on workers only, its port published on the node that runs it. */
  const application = async (t: Test, name: string, settings: Record<string, unknown>) => {
    const created = await client.post('application.create', { name, environmentId: project.environment.environmentId, serverId: M });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const { applicationId, appName } = created.body as { applicationId: string; appName: string };
    t.teardown(() => client.post('application.delete', { applicationId }).catch(() => undefined));
    await client.post('application.saveGitProvider', { applicationId, customGitUrl: `file://${repo.dir}`, customGitBranch: 'main', customGitBuildPath: '/' });
    await client.post('application.saveBuildType', { applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile' });
    const updated = await client.post('application.update', { applicationId, placementSwarm: { Constraints: ['node.role==worker'] }, ...settings });
    t.equal(updated.status, 200, JSON.stringify(updated.body));
    const port = await freePort();
    t.equal((await client.post('port.create', { applicationId, publishedPort: port, targetPort: 8080, publishMode: 'host', protocol: 'tcp' })).status, 200);
    return { applicationId, appName, port };
  };
  const tasksOf = async (applicationId: string) => {
    const [service] = await manager.listServices({ filters: { label: [`berth.id=${applicationId}`] } });
    return service ? ((await manager.listTasks({ filters: { service: [service.ID] } })) as { ID: string; NodeID?: string; Status?: { State?: string } }[]) : [];
  };
  const answer = (port: number, on = w) =>
    waitFor(
      `the application answering on ${on.name}`,
      async () => {
        const res = await fetch(`http://${on.address}:${port}/`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
        return res?.ok ? res.text() : undefined;
      },
      { timeout: 60_000, interval: 250 },
    );

  t.test('an image built on the manager and pushed to the registry runs on the worker', async t => {
    const { applicationId, appName, port } = await application(t, 'through', { registryId: REGISTRY });
    const t0 = performance.now();
    const done = await runFinished(client, 'application.deploy', { applicationId });
    t.comment(`two-node deploy through the registry: ${Math.round(performance.now() - t0)} ms`);
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
    const image = `${registry.url}/nodes/${appName.toLowerCase()}:deploy-${String(done.deploymentId).toLowerCase()}`;
    t.match(log, `Pushed ${image}`);
    t.match(log, 'Checked the image on 1 node(s) of the swarm', 'the worker, the only node the constraint allows, was checked');
    t.notMatch(log, PASSWORD);
    const { Swarm } = (await worker.info()) as { Swarm: { NodeID: string } };
    const running = (await tasksOf(applicationId)).filter(task => task.Status?.State === 'running');
    t.same(
      running.map(task => task.NodeID),
      [Swarm.NodeID],
      'its task runs on the worker',
    );
    t.equal(await answer(port), 'from-the-worker\n');
    t.ok(
      (await worker.listImages()).some(i => (i.RepoTags ?? []).includes(image)),
      'the worker pulled it from the registry',
    );
    for (const h of [m, w]) t.equal(await credentialsOn(h), '', `no credential in ${h.name}'s /root or /etc/docker`);

    // The same application without its registry: the worker cannot pull the image built on the manager.
    t.equal((await client.post('application.update', { applicationId, registryId: null })).status, 200);
    const refused = await runFinished(client, 'application.deploy', { applicationId });
    t.equal(refused.status, 'error');
    t.match(refused.errorMessage, new RegExp(`^node ${w.name} cannot pull image berth/${appName.toLowerCase()}:deploy-\\S+: .+`), 'the pull check names the worker');
    t.same(
      (await tasksOf(applicationId)).filter(task => task.Status?.State === 'running').map(task => task.ID),
      running.map(task => task.ID),
      'the version that ran keeps running, no new task',
    );
    t.equal(await answer(port), 'from-the-worker\n');
  });

  t.test('without a registry, the pull check fails the deployment naming the worker, before any task is created', async t => {
    const { applicationId, appName } = await application(t, 'local only', {});
    const done = await runFinished(client, 'application.deploy', { applicationId });
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'error', log);
    t.match(done.errorMessage, `node ${w.name} cannot pull image berth/${appName.toLowerCase()}:deploy-${String(done.deploymentId).toLowerCase()}: `);
    t.notMatch(log, 'Creating service', 'the service was never created');
    t.same(await tasksOf(applicationId), [], 'no task');
    t.same(await manager.listServices({ filters: { label: [`berth.id=${applicationId}`] } }), [], 'no service');
  });

  t.test('a build server builds and pushes to the build registry, the target server deploys the pushed image', async t => {
    const { applicationId, appName, port } = await application(t, 'built elsewhere', { buildServerId: B, buildRegistryId: REGISTRY, placementSwarm: { Constraints: ['node.role==manager'] } });
    const done = await runFinished(client, 'application.deploy', { applicationId });
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
    const tag = `deploy-${String(done.deploymentId).toLowerCase()}`;
    const image = `${registry.url}/nodes/${appName.toLowerCase()}:${tag}`;
    t.match(log, `Building with dockerfile on the build server ${B}`);
    // The deployment answers the build server it built on, and allCentralized joins both servers as the peer's.
    t.equal(done.buildServerId, B, 'buildServerId: the build server');
    const central = ((await client.get('deployment.allCentralized')).body as Record<string, any>[]).find(d => d.deploymentId === done.deploymentId);
    t.match(central, {
      buildServerId: B,
      server: { serverId: M, serverType: 'deploy' },
      buildServer: { serverId: B, serverType: 'build' },
      application: { applicationId, server: { serverId: M }, buildServer: { serverId: B } },
    });
    t.match(log, `Pushed ${image}`);
    t.notMatch(log, PASSWORD);
    const tagsOn = async (h: RemoteHost) => (await new Docker({ socketPath: h.socket }).listImages()).flatMap(i => i.RepoTags ?? []);
    t.ok((await tagsOn(b)).includes(`berth/${appName.toLowerCase()}:${tag}`), 'built on the build server');
    t.notOk((await tagsOn(m)).includes(`berth/${appName.toLowerCase()}:${tag}`), 'not built on the target');
    t.ok((await tagsOn(m)).includes(image), 'the target pulled the pushed image');
    t.equal(await answer(port, m), 'from-the-worker\n', 'it answers on the target');
    for (const h of [m, b]) t.equal(await credentialsOn(h), '', `no credential in ${h.name}'s /root or /etc/docker`);
    await new Docker({ socketPath: b.socket })
      .getImage(`berth/${appName.toLowerCase()}:${tag}`)
      .remove({ force: true })
      .catch(() => undefined);
  });

  t.test('a build server without buildRegistryId: the deploy is refused before the build, with the reason', async t => {
    const { applicationId } = await application(t, 'no build registry', { buildServerId: B });
    const done = await runFinished(client, 'application.deploy', { applicationId });
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'error', log);
    t.match(done.errorMessage, `The build server ${B} needs a build registry (buildRegistryId)`);
    t.notMatch(log, 'Building with', 'nothing was built');
    t.same(await manager.listServices({ filters: { label: [`berth.id=${applicationId}`] } }), [], 'no service');
  });

  t.test('the registry removed: no node holds a credential, no process carries the password', async t => {
    t.equal((await client.post('registry.remove', { registryId: REGISTRY })).status, 200);
    for (const h of [m, w, b]) {
      t.equal(await credentialsOn(h), '', `no credential in ${h.name}'s /root or /etc/docker`);
      const args = await inHost(h, ['sh', '-c', 'cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\\0" " "']);
      t.notOk(args.stdout.includes(PASSWORD), `no process on ${h.name} has the password in its arguments`);
    }
  });
}
