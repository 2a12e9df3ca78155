// server.setup's install steps run for real. A private host of the kit (its /usr, /etc and package
// database copy-on-write over this machine's, its own /run, dockerd and sshd) is made a machine that
// never had Docker's programs: the docker CLI and docker-compose are deleted from its /usr and
// forgotten by its package database, and apt's only source is the local file repository that
// scripts/services.sh fills from Debian's archive (/var/cache/berth-apt-repo: docker.io,
// docker-compose, containerd, runc). validate says what is missing, by code, with the fix;
// server.setup installs both from that repository, each command with its exit code in the
// server's deployment log; a second setup changes nothing; an application then deploys there. The
// host's engine keeps running throughout (its daemon is the kit's; only the programs go), and
// policy-rc.d keeps the packages' scripts from starting a second one, as in any container.
import { existsSync } from 'node:fs';
import t from 'tap';
import { canRun, runFinished, signUpAdmin, startTestServer, TEST_BASE_IMAGE } from '@berth/core/testing';
import { inHost, privateRemoteHosts, remoteHostsMissing, type RemoteHost } from '@berth/test/remote-hosts';

const REPO = '/var/cache/berth-apt-repo';
const repoMissing = () => (existsSync(`${REPO}/Packages`) ? undefined : `no local package repository at ${REPO} (scripts/services.sh fills it from Debian's archive)`);

/** Runs a shell line on the host as its root (the kit's console); fails the test when it fails. */
async function onHost(h: RemoteHost, line: string): Promise<string> {
  const r = await inHost(h, ['sh', '-c', line]);
  if (r.code !== 0) throw new Error(`on ${h.name}: ${line}: exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** The host made one that never had Docker's programs, with the local repository as its only package source. */
const WITHOUT_DOCKER = `set -e
for p in $(which -a docker docker-compose); do rm -f "$p"; done
perl -00 -ne 'print unless /^Package: (docker\\.io|docker-compose)\\n/m' /var/lib/dpkg/status >/tmp/status
cat /tmp/status >/var/lib/dpkg/status
rm -f /var/lib/dpkg/info/docker.io.* /var/lib/dpkg/info/docker-compose.*
rm -f /etc/apt/sources.list.d/*
echo 'deb [trusted=yes] file:${REPO} ./' >/etc/apt/sources.list
mkdir -p /tmp/apt-cache/archives/partial
echo 'Dir::Cache "/tmp/apt-cache";' >/etc/apt/apt.conf.d/99berth-test
printf '#!/bin/sh\\nexit 101\\n' >/usr/sbin/policy-rc.d
chmod +x /usr/sbin/policy-rc.d`;

if (canRun(t, 'remote-hosts', remoteHostsMissing()) && canRun(t, 'apt-repo', repoMissing())) {
  const set = await privateRemoteHosts(1);
  t.teardown(() => set.down());
  const h = set.hosts[0] as RemoteHost;
  await onHost(h, WITHOUT_DOCKER);

  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const key = await client.post('sshKey.create', { name: 'kit', privateKey: h.privateKey, publicKey: h.publicKey });
  const made = await client.post('server.create', { name: 'bare', ipAddress: h.address, port: 22, username: 'root', sshKeyId: key.body.sshKeyId, hostKeyFingerprint: h.hostKeyFingerprint });
  t.equal(made.status, 200, JSON.stringify(made.body));
  const serverId = made.body.serverId as string;

  t.test('validate names what is missing, by code, with the fix', async t => {
    t.equal((await inHost(h, ['sh', '-c', 'command -v docker docker-compose'])).stdout, '', 'no docker program and no docker-compose on the host');
    const v = await client.get('server.validate', { serverId });
    t.equal(v.status, 200, JSON.stringify(v.body));
    t.match(
      v.body.checks.find((c: { code: string }) => c.code === 'docker.missing'),
      { ok: false, message: 'No docker program on the server', fix: /server\.setup.*docker\.io/ },
    );
    t.match(v.body.docker, { enabled: false, version: null });
  });

  t.test('setup installs docker.io and docker-compose from the local repository, every command with its exit code', async t => {
    const r = await client.post('server.setup', { serverId });
    t.equal(r.status, 200, JSON.stringify(r.body));
    const steps = Object.fromEntries(r.body.steps.map((s: { step: string; result: string; exitCode: number }) => [s.step, s]));
    t.match(steps.docker, { result: 'changed', exitCode: 0 }, 'docker: installed');
    t.match(steps.compose, { result: 'changed', exitCode: 0 }, 'compose: installed');
    const log = String((await client.get('deployment.readLogs', { deploymentId: r.body.deploymentId, tail: 1000 })).body);
    t.match(log, /\] docker: .*docker\.io/, 'the log says what the docker step ensures');
    t.match(log, /apt-get install -y -q --no-install-recommends "\$@"[^\n]*\n(?:.*\n)*?\s+exit 0/, "apt-get's install with its exit code");
    t.match(log, /Setup done/);
    const packages = await onHost(h, "dpkg-query -W -f '${Package} ${Status} ${Version}\\n' docker.io docker-compose");
    t.match(packages, /^docker\.io install ok installed 20\.10/m, "the host's package database has docker.io, from the repository");
    t.match(packages, /^docker-compose install ok installed 1\.29/m, 'and docker-compose');
    t.match(await onHost(h, 'docker-compose version --short'), /^1\.29/, 'docker-compose runs');
    t.match(await onHost(h, "docker version --format '{{.Client.Version}}'"), /^20\.10/, 'the docker CLI runs and reaches the engine');

    const again = await client.post('server.setup', { serverId });
    t.equal(again.status, 200);
    t.same(
      again.body.steps.filter((s: { result: string }) => s.result !== 'unchanged').map((s: { step: string }) => s.step),
      [],
      'a second setup changes nothing',
    );
  });

  t.test('an application then deploys there', async t => {
    const {
      body: { environment },
    } = await client.post('project.create', { name: 'after setup' });
    const created = await client.post('application.create', { name: 'first', environmentId: environment.environmentId, serverId });
    const { applicationId } = created.body as { applicationId: string };
    await client.post('application.saveDockerProvider', { applicationId, dockerImage: TEST_BASE_IMAGE });
    await client.post('application.update', { applicationId, command: 'sleep', args: ['3600'], stopGracePeriodSwarm: 1_000_000_000 });
    const done = await runFinished(client, 'application.deploy', { applicationId });
    t.equal(done.status, 'done', done.errorMessage ?? '');
    t.match(await onHost(h, "docker service ls --format '{{.Name}} {{.Replicas}}'"), /first-\w+ 1\/1/, 'its service runs on the host');
    t.equal((await client.post('application.delete', { applicationId })).status, 200);
  });
}
