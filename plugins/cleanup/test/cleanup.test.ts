// Host care on a real host: a private kit host (its own dockerd and sshd, never the shared engine,
// whose images other test files use) is added as a server; on its engine sit objects of a live
// record, of a deleted record, of another organization, of nobody, and an image a stopped service
// names. Each cleanup's dry run lists exactly what its run then removes (the run's log carries the
// same report), the reclaimed bytes match `docker system df` before and after, and what a live
// record or the other organization owns stays. Another organization's serverId is 404 with
// nothing written; the daily cleanup, ticked with injected dates, runs as a deployment and emits
// one dockerCleanup event. This machine's engine is only ever dry-run here.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import Docker from 'dockerode';
import { addMember, canRun, deploymentFinished, freePort, otherOrganization, signUpAdmin, startTestServer, TEST_BASE_IMAGE, type Client } from '@berth/core/testing';
import { DEPLOYMENT_ID_HEADER, type BerthEvents } from '@berth/core';
import { loadImage, privateRemoteHosts, remoteHostsMissing } from '@berth/test/remote-hosts';

t.setTimeout(600_000);

if (canRun(t, 'remote-hosts', remoteHostsMissing())) {
  const set = await privateRemoteHosts(1);
  t.teardown(() => set.down());
  const host = set.hosts[0]!;
  const remote = new Docker({ socketPath: host.socket });
  await loadImage(host, TEST_BASE_IMAGE);

  const server = await startTestServer({ proxy: 'none' });
  t.teardown(() => server.destroy());
  const { client, organizationId, userId } = await signUpAdmin(server);
  const other = await otherOrganization(server, userId);
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
  const serverId = added.body.serverId as string;
  const { environment } = (await client.post('project.create', { name: 'Care' })).body;
  const live = (await client.post('application.create', { name: 'live', environmentId: environment.environmentId, serverId })).body.applicationId as string;
  const dead = (await client.post('application.create', { name: 'dead', environmentId: environment.environmentId, serverId })).body.applicationId as string;
  if ((await client.post('application.delete', { applicationId: dead })).status !== 200) throw new Error('application.delete failed');

  // The first call prepares the host's engine (swarm mode) like any use does.
  const first = await client.post('settings.cleanAll', { serverId, dryRun: true });
  if (first.status !== 200) throw new Error(`settings.cleanAll: ${first.status} ${JSON.stringify(first.body)}`);

  const docker = (argv: string[], input?: string) =>
    new Promise<string>((resolve, reject) => {
      const child = execFile('docker', ['-H', `unix://${host.socket}`, ...argv], { env: { ...process.env, DOCKER_BUILDKIT: '0' } }, (err, stdout, stderr) =>
        err ? reject(new Error(`docker ${argv.join(' ')}: ${stderr}`)) : resolve(stdout.trim()),
      );
      if (input !== undefined) child.stdin!.end(input);
    });
  const labels = (owner: { id: string; org: string } | null) => (owner ? ['--label', 'berth.kind=application', '--label', `berth.id=${owner.id}`, '--label', `berth.organization=${owner.org}`] : []);
  const owners = { free: null, dead: { id: dead, org: organizationId }, live: { id: live, org: organizationId }, other: { id: 'someone-elses-record', org: other.organizationId } };
  for (const [name, owner] of Object.entries(owners)) {
    await docker(
      ['build', '--network', 'none', '-t', `berth-ct/${name}:1`, ...labels(owner), '-'],
      `FROM ${TEST_BASE_IMAGE}\nRUN dd if=/dev/urandom of=/blob-${name} bs=1024 count=${name === 'free' ? 96 : 48}\n`,
    );
    await docker(['volume', 'create', ...labels(owner), `ct-${name}`]);
    // The host's data root is a directory of this machine: the volume's data is written there.
    writeFileSync(path.join((await remote.getVolume(`ct-${name}`).inspect()).Mountpoint, 'blob'), randomBytes(32 * 1024));
  }
  await docker(['build', '--network', 'none', '-t', 'berth-ct/svc:1', '-'], `FROM ${TEST_BASE_IMAGE}\nRUN dd if=/dev/urandom of=/blob-svc bs=1024 count=16\n`);
  // Stopped containers: nobody's (of the base image), the deleted record's, the live record's, the other organization's (it keeps the base image in use).
  await docker(['create', '--network', 'none', '--name', 'ct-free', TEST_BASE_IMAGE, 'true']);
  await docker(['create', '--network', 'none', '--name', 'ct-dead', ...labels(owners.dead), 'berth-ct/dead:1', 'true']);
  await docker(['create', '--network', 'none', '--name', 'ct-live', ...labels(owners.live), 'berth-ct/live:1', 'true']);
  await docker(['create', '--network', 'none', '--name', 'ct-other', ...labels(owners.other), TEST_BASE_IMAGE, 'true']);
  // A stopped service (no task) keeps its image.
  await remote.createService({ Name: 'ct-svc', TaskTemplate: { ContainerSpec: { Image: 'berth-ct/svc:1' } }, Mode: { Replicated: { Replicas: 0 } } } as never);

  type Report = { steps: { step: string; objects: { id: string; name: string; bytes: number }[]; bytes: number }[]; bytes: number; diskUsage: Record<string, number> };
  const names = (r: Report, step: string) => r.steps.find(s => s.step === step)!.objects.map(o => o.name);
  const dry = async (op: string, c: Client = client) => {
    const res = await c.post(`settings.${op}`, { serverId, dryRun: true });
    t.equal(res.status, 200, `${op} dry run: ${JSON.stringify(res.body)}`);
    return res.body as Report;
  };
  const df = async () => {
    const d = (await remote.df()) as { LayersSize: number; Volumes: { UsageData: { Size: number } }[] };
    return { images: d.LayersSize, volumes: d.Volumes.reduce((s, v) => s + Math.max(0, v.UsageData.Size), 0) };
  };
  const exists = {
    container: (n: string) =>
      remote
        .getContainer(n)
        .inspect()
        .then(
          () => true,
          () => false,
        ),
    image: (n: string) =>
      remote
        .getImage(n)
        .inspect()
        .then(
          () => true,
          () => false,
        ),
    volume: (n: string) =>
      remote
        .getVolume(n)
        .inspect()
        .then(
          () => true,
          () => false,
        ),
  };
  const reportOf = async (deploymentId: string) => {
    const log = String((await client.get('deployment.readLogs', { deploymentId, tail: 1000 })).body);
    const line = log.split('\n').find(l => l.includes('report {'));
    return { log, report: line ? (JSON.parse(line.slice(line.indexOf('report {') + 7)) as Report) : undefined };
  };

  t.test("each dry run lists what is nobody's or a deleted record's, never a live record's or another organization's", async t => {
    t.same(names(await dry('cleanStoppedContainers'), 'containers'), ['ct-dead', 'ct-free']);
    t.same(names(await dry('cleanUnusedImages'), 'images'), ['berth-ct/free:1'], 'an image a stopped container uses stays while the container does');
    t.same(names(await dry('cleanUnusedVolumes'), 'volumes'), ['ct-dead', 'ct-free']);
    const all = await dry('cleanAll');
    t.same(names(all, 'containers'), ['ct-dead', 'ct-free']);
    t.same(names(all, 'images'), ['berth-ct/dead:1', 'berth-ct/free:1'], "with its stopped container gone, the deleted record's image goes too");
    t.notOk(
      all.steps.some(s => s.step === 'volumes'),
      'cleanAll leaves volumes alone',
    );
    t.ok(names(all, 'images').every(n => !/live|other|svc|busybox/.test(n)));
    t.ok(all.steps.find(s => s.step === 'images')!.bytes >= (96 + 48) * 1024, 'the images hold at least their blobs');
  });

  t.test("another organization's serverId is 404 on every operation, with nothing written", async t => {
    for (const op of ['cleanUnusedImages', 'cleanUnusedVolumes', 'cleanStoppedContainers', 'cleanDockerBuilder', 'cleanDockerPrune', 'cleanAll']) {
      t.equal((await other.client.post(`settings.${op}`, { serverId })).status, 404, op);
      t.equal((await other.client.post(`settings.${op}`, { serverId, dryRun: true })).status, 404, `${op} dry run`);
    }
    const before = (await client.get('server.one', { serverId })).body.enableDockerCleanup;
    t.equal((await other.client.post('settings.updateDockerCleanup', { serverId, enableDockerCleanup: !before })).status, 404);
    t.equal((await client.get('server.one', { serverId })).body.enableDockerCleanup, before, 'the server row is unchanged');
    t.ok(await exists.container('ct-free'), 'nothing was removed');
    const member = await addMember(server, client, 'care-admin@example.com', 'member');
    t.equal((await member.client.post('settings.cleanAll', { dryRun: true })).status, 403, "a member (no admin) may not clean Berth's own machine");
    t.equal((await other.client.post('settings.cleanAll', { dryRun: true })).status, 403, "nor the owner of another organization: this machine is the instance operators'");
  });

  t.test("Berth's own engine: the owner's dry run lists no other organization's object", async t => {
    const mine = await client.post('settings.cleanDockerPrune', { dryRun: true });
    t.equal(mine.status, 200, JSON.stringify(mine.body));
    t.equal(mine.body.serverId, null);
    t.same(
      mine.body.steps.map((s: { step: string }) => s.step),
      ['containers', 'images', 'builder'],
    );
    const refused = await client.post('settings.cleanStoppedContainers', {});
    t.equal(refused.status, 409, 'a real run there is refused while cleanupThisMachine is off (as on every test server)');
    t.match(refused.body.message, 'cleanupThisMachine');
  });

  t.test("Berth's own engine: dry runs at once each answer (the engine reads one df at a time and refuses the others while it runs)", async t => {
    const answers = await Promise.all(['cleanAll', 'cleanUnusedImages', 'cleanUnusedVolumes', 'cleanDockerBuilder', 'cleanDockerPrune'].map(op => client.post(`settings.${op}`, { dryRun: true })));
    t.same(
      answers.map(r => r.status),
      [200, 200, 200, 200, 200],
      JSON.stringify(answers.filter(r => r.status !== 200).map(r => r.body)),
    );
  });

  t.test('cleanAll removes what its dry run said, in the background, its log the same report; df agrees', async t => {
    const planned = await dry('cleanAll');
    const before = await df();
    const res = await client.post('settings.cleanAll', { serverId });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.same(res.body, { status: 'scheduled', message: 'Docker cleanup has been initiated in the background' }, "the peer's answer");
    const deploymentId = res.headers.get(DEPLOYMENT_ID_HEADER)!;
    const done = await deploymentFinished(client, deploymentId);
    const { log, report } = await reportOf(deploymentId);
    t.equal(done.status, 'done', log);
    t.same(report?.steps, planned.steps, "the log carries the dry run's report");
    const after = await df();
    t.equal(before.images - after.images, planned.steps.find(s => s.step === 'images')!.bytes, 'the layers freed are the bytes reported');
    for (const n of ['ct-free', 'ct-dead']) t.notOk(await exists.container(n), `${n} removed`);
    for (const n of ['ct-live', 'ct-other']) t.ok(await exists.container(n), `${n} stays`);
    for (const n of ['berth-ct/free:1', 'berth-ct/dead:1']) t.notOk(await exists.image(n), `${n} removed`);
    for (const n of ['berth-ct/live:1', 'berth-ct/other:1', 'berth-ct/svc:1', TEST_BASE_IMAGE]) t.ok(await exists.image(n), `${n} stays`);
  });

  t.test("cleanUnusedVolumes answers true once done; a live record's and the other organization's volumes stay", async t => {
    const planned = await dry('cleanUnusedVolumes');
    t.same(names(planned, 'volumes'), ['ct-dead', 'ct-free']);
    const before = await df();
    const res = await client.post('settings.cleanUnusedVolumes', { serverId });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.equal(res.body, true);
    const { report } = await reportOf(res.headers.get(DEPLOYMENT_ID_HEADER)!);
    t.same(report?.steps, planned.steps);
    t.equal(before.volumes - (await df()).volumes, planned.bytes, 'the volume bytes freed are the bytes reported');
    t.ok(planned.bytes >= 2 * 32 * 1024);
    for (const n of ['ct-free', 'ct-dead']) t.notOk(await exists.volume(n), `${n} removed`);
    for (const n of ['ct-live', 'ct-other']) t.ok(await exists.volume(n), `${n} stays`);
    const builder = await client.post('settings.cleanDockerBuilder', { serverId });
    t.equal(builder.status, 200, JSON.stringify(builder.body));
    t.equal(builder.body, null, 'cleanDockerBuilder answers nothing, as the peer');
  });

  t.test('the daily cleanup: a deployment at cleanupCron with its log, and one dockerCleanup event', async t => {
    t.equal((await client.post('settings.updateDockerCleanup', { serverId, enableDockerCleanup: true })).body, true);
    t.equal((await client.get('server.one', { serverId })).body.enableDockerCleanup, true);
    await docker(['create', '--network', 'none', '--name', 'ct-later', TEST_BASE_IMAGE, 'true']);
    const events: BerthEvents['dockerCleanup'][] = [];
    const off = server.kernel.container.cradle.events.on('dockerCleanup', p => void events.push(p));
    t.teardown(off);
    const { cleanup } = server.kernel.container.cradle;
    t.same(await cleanup.tick(new Date('2030-01-01T00:00:00Z')), [], 'the first tick only notes the latest window');
    t.same(await cleanup.tick(new Date('2030-01-01T23:40:00Z')), [], 'before 23:50 nothing is due');
    const queued = await cleanup.tick(new Date('2030-01-01T23:51:00Z'));
    t.equal(queued.length, 1, 'at 23:50 one run is queued');
    t.same(await cleanup.tick(new Date('2030-01-01T23:59:00Z')), [], 'and not twice');
    const done = await deploymentFinished(client, queued[0]!);
    const { log, report } = await reportOf(queued[0]!);
    t.equal(done.status, 'done', log);
    t.same(names(report!, 'containers'), ['ct-later']);
    t.notOk(await exists.container('ct-later'));
    t.equal(events.length, 1, 'one dockerCleanup event');
    t.match(events[0], { organizationId, serverId, serverName: 'kit host', removed: { containers: 1, images: 0, volumes: 0 } });
    t.equal((await client.post('settings.updateDockerCleanup', { serverId, enableDockerCleanup: false })).body, true);
    t.same(await cleanup.tick(new Date('2030-01-02T23:51:00Z')), [], 'turned off: nothing more');
  });

  t.test('a daily run that fails is a deployment in error, and its dockerCleanup event says why', async t => {
    // A server whose sshd is gone: nothing listens at its port.
    const gone = await client.post('server.create', {
      name: 'gone host',
      ipAddress: '127.0.0.1',
      port: await freePort(),
      username: host.user,
      sshKeyId: key.body.sshKeyId,
      hostKeyFingerprint: host.hostKeyFingerprint,
    });
    t.equal(gone.status, 200, JSON.stringify(gone.body));
    const goneId = gone.body.serverId as string;
    t.teardown(() => client.post('server.remove', { serverId: goneId }));
    t.equal((await client.post('settings.updateDockerCleanup', { serverId: goneId, enableDockerCleanup: true })).body, true);
    const events: BerthEvents['dockerCleanup'][] = [];
    const off = server.kernel.container.cradle.events.on('dockerCleanup', p => void events.push(p));
    t.teardown(off);
    const { cleanup } = server.kernel.container.cradle;
    t.same(await cleanup.tick(new Date('2030-01-03T00:00:00Z')), [], 'its first tick only notes the window');
    const queued = await cleanup.tick(new Date('2030-01-03T23:51:00Z'));
    t.equal(queued.length, 1, 'one run: the gone host (the kit host is turned off)');
    const done = await deploymentFinished(client, queued[0]!);
    t.equal(done.status, 'error', 'the deployment is in error');
    t.equal(events.length, 1, 'one dockerCleanup event');
    t.match(events[0], { organizationId, serverId: goneId, serverName: 'gone host', removed: { containers: 0, images: 0, volumes: 0, reclaimedBytes: 0 }, error: /./ });
    t.match(done.errorMessage ?? '', events[0]!.error!.slice(0, 40), 'the same reason as the deployment’s');
  });
}
