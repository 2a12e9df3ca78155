// Registries from a server's engine, for real: a kit host (its own address, /etc, /root, dockerd and
// sshd) added as a user would, a real registry (Debian's docker-registry) with TLS and htpasswd on
// this machine's address on the hosts' network. testRegistry with that serverId logs in, pushes and
// pulls from the host's engine (which trusts the registry's CA; this machine's engine does not),
// and an application built on the host is pushed there and deployed from it. No credential is left
// in the host's /root/.docker or /etc/docker.
import t from 'tap';
import Docker from 'dockerode';
import { canRun, freePort, makeGitRepo, runFinished, signUpAdmin, startTestServer, waitFor, TEST_BASE_IMAGE } from '@berth/core/testing';
import { inHost, remoteHostsMissing, sharedRemoteHosts } from '@berth/test/remote-hosts';
import { registryMissing, startTlsRegistry } from './local-registry.ts';

t.setTimeout(600_000);

if (canRun(t, 'remote-hosts', remoteHostsMissing()) && canRun(t, 'docker-registry', registryMissing())) {
  const {
    hosts: [h],
    gateway,
  } = await sharedRemoteHosts(1);
  const host = h!;
  const remote = new Docker({ socketPath: host.socket });
  const PASSWORD = 'srv-pw-' + Math.random().toString(36).slice(2);
  const registry = await startTlsRegistry(gateway, { pusher: PASSWORD });
  t.teardown(() => registry.stop());
  // What an operator (or enableSelfHostedRegistry, later) does on each node: trust the registry's CA.
  const certDir = `/etc/docker/certs.d/${registry.url}`;
  const trusted = await inHost(host, ['sh', '-c', `mkdir -p "$0" && cat > "$0/ca.crt"`, certDir], registry.ca);
  if (trusted.code !== 0) throw new Error(`writing the CA on the host: ${trusted.stderr}`);
  t.teardown(() => inHost(host, ['rm', '-rf', certDir]));

  const server = await startTestServer({ deploySettleSeconds: 1, proxy: 'none', hostAccess: { bindMountRoots: [], hostNetworks: false, localGit: true } });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const key = await client.post('sshKey.create', { name: 'kit host', privateKey: host.privateKey, publicKey: host.publicKey });
  const added = await client.post('server.create', {
    name: 'kit host',
    ipAddress: host.address,
    port: 22,
    username: host.user,
    sshKeyId: key.body.sshKeyId,
    hostKeyFingerprint: host.hostKeyFingerprint,
  });
  if (added.status !== 200) throw new Error(`server.create: ${added.status} ${JSON.stringify(added.body)}`);
  const SERVER = added.body.serverId as string;
  const base = { registryName: 'on the hosts network', username: 'pusher', password: PASSWORD, registryUrl: registry.url, registryType: 'cloud', imagePrefix: 'apps' };
  const credentialsOnHost = async () => (await inHost(host, ['grep', '-rlsF', '--', PASSWORD.slice(0, 14), '/root', '/etc/docker'])).stdout.trim();

  t.test("testRegistry runs on the server's engine", async t => {
    const there = await client.post('registry.testRegistry', { ...base, serverId: SERVER });
    t.equal(there.status, 200, JSON.stringify(there.body));
    t.equal(there.body, true, 'the host trusts the CA: login, push and pull pass there');
    const here = await client.post('registry.testRegistry', base);
    t.equal(here.status, 400, "this machine's engine does not trust it");
    t.match(here.body.message, /^Login to .* failed: .*(certificate|x509)/);
    t.notMatch(here.body.message, PASSWORD);
    t.same(
      (await remote.listImages()).flatMap(i => i.RepoTags ?? []).filter(tag => tag.includes('berth-push-check')),
      [],
      'no check image left on the host',
    );
    t.equal(await credentialsOnHost(), '', "no credential in the host's /root or /etc/docker");
  });

  t.test('an application built on the server is pushed to the registry and deployed from it', async t => {
    const repo = await makeGitRepo({
      Dockerfile: `FROM ${TEST_BASE_IMAGE}\nCOPY index.html /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n`,
      'index.html': 'pushed-from-the-server\n',
    });
    t.teardown(() => repo.cleanup());
    const reg = await client.post('registry.create', { ...base, serverId: SERVER });
    t.equal(reg.status, 200, JSON.stringify(reg.body));
    const { body: project } = await client.post('project.create', { name: 'Registry on a server' });
    const created = await client.post('application.create', { name: 'pushed', environmentId: project.environment.environmentId, serverId: SERVER });
    const { applicationId, appName } = created.body as { applicationId: string; appName: string };
    t.teardown(() => client.post('application.delete', { applicationId }).catch(() => undefined));
    await client.post('application.saveGitProvider', { applicationId, customGitUrl: `file://${repo.dir}`, customGitBranch: 'main', customGitBuildPath: '/' });
    await client.post('application.saveBuildType', { applicationId, buildType: 'dockerfile', dockerfile: 'Dockerfile' });
    t.equal((await client.post('application.update', { applicationId, registryId: reg.body.registryId })).status, 200);
    const port = await freePort();
    t.equal((await client.post('port.create', { applicationId, publishedPort: port, targetPort: 8080, publishMode: 'host', protocol: 'tcp' })).status, 200);

    const done = await runFinished(client, 'application.deploy', { applicationId });
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
    const image = `${registry.url}/apps/${appName.toLowerCase()}:deploy-${String(done.deploymentId).toLowerCase()}`;
    t.match(log, `Pushed ${image}`);
    t.notMatch(log, PASSWORD);
    const [service] = await remote.listServices({ filters: { label: [`berth.id=${applicationId}`] } });
    t.match(
      String(service?.Spec?.TaskTemplate && (service.Spec.TaskTemplate as { ContainerSpec?: { Image?: string } }).ContainerSpec?.Image),
      image,
      'the service on the server runs the registry reference',
    );
    const body = await waitFor(
      'the application answering on the host',
      async () => {
        const res = await fetch(`http://${host.address}:${port}/`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
        return res?.ok ? res.text() : undefined;
      },
      { timeout: 60_000, interval: 250 },
    );
    t.equal(body, 'pushed-from-the-server\n');
    t.equal(await credentialsOnHost(), '', "no credential in the host's /root or /etc/docker after the deploy");
    t.equal((await client.post('application.delete', { applicationId })).status, 200);
    await remote
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
  });
}
