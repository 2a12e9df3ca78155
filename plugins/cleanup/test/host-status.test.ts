// What a host is made of, on the real engine, PostgreSQL and a kit host: getDockerDiskUsage answers
// the rows `docker system df` prints for the same engine; checkInfrastructureHealth reads Berth's
// database and its own proxy service (none configured, a running one, one scaled to nothing);
// checkGPUStatus and setupGPU answer truthfully for machines without a GPU (this one, and a kit
// host reached over SSH); the access log cleanup's schedule is stored, and when its window passes
// the proxy's access log keeps its last 1000 lines and the proxy gets SIGUSR1. Each on both wire
// forms; a member, another organization's owner and another organization's serverId refused.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import t from 'tap';
import { addMember, canRun, freePort, otherOrganization, signUpAdmin, startTestServer, TEST_STATIC_IMAGE, waitFor, type Client, type Reply } from '@berth/core/testing';
import { humanSize, KEPT_LINES, nodeGpus, parseNvidiaSmi } from '@berth/plugin-cleanup';
import { remoteHostsMissing, sharedRemoteHosts } from '@berth/test/remote-hosts';

t.setTimeout(600_000);
const run = promisify(execFile);
const docker = new Docker();

/** The answer of either wire form: the tRPC envelope's json, or the REST body. */
const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);
/** The same call on both wire forms. */
const both = async (c: Client, kind: 'query' | 'mutation', op: string, input: Record<string, unknown> = {}) => ({
  rest: kind === 'query' ? await c.get(op, input) : await c.post(op, input),
  trpc: await c.trpc(kind, op, input),
});

t.test('sizes as the Docker CLI prints them, nvidia-smi answers and swarm GPU resources', async t => {
  t.equal(humanSize(0), '0B');
  t.equal(humanSize(999), '999B');
  t.equal(humanSize(765_700_000), '765.7MB');
  t.equal(humanSize(1_000_000_000), '1GB');
  t.equal(humanSize(12_345_678), '12.35MB');
  // The CSV nvidia-smi answers on a machine with two GPUs, and the CUDA line of its -q report.
  t.same(
    parseNvidiaSmi({
      driver: '550.54.14\n550.54.14\n',
      names: 'NVIDIA A100-SXM4-40GB\nNVIDIA A100-SXM4-40GB\n',
      info: 'NVIDIA A100-SXM4-40GB, 40960 MiB\nNVIDIA A100-SXM4-40GB, 40960 MiB\n',
      query: '==============NVSMI LOG==============\n\nDriver Version                            : 550.54.14\nCUDA Version                              : 12.4\n',
    }),
    { driverVersion: '550.54.14', availableGPUs: 2, gpuModel: 'NVIDIA A100-SXM4-40GB', memoryInfo: '40960 MiB', cudaVersion: '12.4' },
  );
  t.same(parseNvidiaSmi({ driver: '', names: '', info: '', query: '' }), { availableGPUs: 0 }, 'no GPU: nothing found, the optional fields absent');
  t.equal(nodeGpus([{ DiscreteResourceSpec: { Kind: 'GPU', Value: 2 } }]), 2);
  t.equal(nodeGpus(null), 0);
});

t.test('this machine', async t => {
  const server = await startTestServer({ proxy: 'none' });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const a = admin.client;
  const member = await addMember(server, a, 'member@example.com', 'member');
  const other = await otherOrganization(server, member.userId);

  t.test('getDockerDiskUsage answers what `docker system df` prints for the same engine', async t => {
    // The engine is shared with other test files: compare when the CLI answers the same before and after.
    const cli = async () =>
      (await run('docker', ['system', 'df', '--format', '{{json .}}'])).stdout
        .trim()
        .split('\n')
        .map(l => JSON.parse(l) as Record<string, string>)
        .map(r => ({ type: r.Type, totalCount: Number(r.TotalCount), active: Number(r.Active), size: r.Size, reclaimable: r.Reclaimable }));
    const matched = await waitFor(
      'the same disk usage from Berth and the CLI',
      async () => {
        const before = await cli();
        const { rest, trpc } = await both(a, 'query', 'settings.getDockerDiskUsage');
        const after = await cli();
        if (rest.status !== 200 || trpc.status !== 200) throw new Error(`${rest.status} ${trpc.status}: ${JSON.stringify(rest.body)}`);
        const strip = (rows: Record<string, unknown>[]) => rows.map(({ sizeBytes: _, ...r }) => r);
        if (JSON.stringify(before) !== JSON.stringify(after) || JSON.stringify(strip(rest.body)) !== JSON.stringify(before) || JSON.stringify(strip(data(trpc))) !== JSON.stringify(before))
          throw new Error(`CLI ${JSON.stringify(before)} / Berth ${JSON.stringify(rest.body)}`);
        return rest.body as { type: string; sizeBytes: number; size: string }[];
      },
      { timeout: 120_000, interval: 2_000 },
    );
    t.same(
      matched.map(r => r.type),
      ['Images', 'Containers', 'Local Volumes', 'Build Cache'],
      'the four rows, on both wire forms, as the CLI prints them',
    );
    for (const r of matched) t.equal(humanSize(r.sizeBytes), r.size, `${r.type}: sizeBytes is the exact count behind size`);
    t.equal((await member.client.get('settings.getDockerDiskUsage')).status, 403, 'a member may not');
    t.equal((await other.client.get('settings.getDockerDiskUsage')).status, 403, "nor another organization's owner: this machine is the instance operators'");
  });

  t.test('checkInfrastructureHealth without a proxy', async t => {
    const { rest, trpc } = await both(a, 'query', 'settings.checkInfrastructureHealth');
    for (const r of [rest, trpc]) {
      t.equal(r.status, 200);
      t.match(data(r), { postgres: { status: 'healthy' }, traefik: { status: 'unhealthy', message: /No proxy runs: the configuration says proxy: none/ } });
    }
    t.equal((await member.client.get('settings.checkInfrastructureHealth')).status, 403, 'a member may not');
    t.equal((await other.client.trpc('query', 'settings.checkInfrastructureHealth')).status, 403, "nor another organization's owner");
  });

  t.test('GPU status and setup on a machine without a GPU', async t => {
    const truth = JSON.parse((await run('docker', ['info', '--format', '{{json .}}'])).stdout) as { Runtimes?: Record<string, unknown>; DefaultRuntime?: string };
    const { rest, trpc } = await both(a, 'query', 'settings.checkGPUStatus');
    for (const r of [rest, trpc]) {
      t.equal(r.status, 200, JSON.stringify(r.body));
      t.same(data(r), {
        driverInstalled: false,
        runtimeInstalled: false,
        runtimeConfigured: Boolean(truth.Runtimes && 'nvidia' in truth.Runtimes) && truth.DefaultRuntime === 'nvidia',
        cudaSupport: false,
        availableGPUs: 0,
        swarmEnabled: false,
        gpuResources: 0,
      });
    }
    const setup = await both(a, 'mutation', 'settings.setupGPU');
    for (const r of [setup.rest, setup.trpc]) {
      t.equal(r.status, 409, 'setupGPU is refused');
      t.match(JSON.stringify(r.body), /NVIDIA drivers not installed on Berth's own machine/);
    }
    t.equal((await member.client.get('settings.checkGPUStatus')).status, 403, 'a member may not');
    const stranger = await other.client.get('settings.checkGPUStatus');
    t.equal(stranger.status, 403, "another organization's owner may not read this machine");
    t.match(stranger.body.message, /Without serverId this acts on Berth's own machine/);
    t.equal((await other.client.post('settings.setupGPU', {})).status, 403);
  });

  t.test('the access log cleanup schedule', async t => {
    const status = await both(a, 'query', 'settings.getLogCleanupStatus');
    for (const r of [status.rest, status.trpc]) t.same(data(r), { enabled: true, cronExpression: '0 0 * * *' }, "the peer's default: daily at midnight");
    const set = await a.trpc('mutation', 'settings.updateLogCleanup', { cronExpression: '*/15 * * * *' });
    t.same([set.status, data(set)], [200, true], 'a schedule (tRPC form)');
    t.same((await a.get('settings.getLogCleanupStatus')).body, { enabled: true, cronExpression: '*/15 * * * *' });
    const bad = await a.post('settings.updateLogCleanup', { cronExpression: 'every day' });
    t.equal(bad.status, 400, 'not a cron expression');
    t.match(JSON.stringify(bad.body.issues), /cronExpression: not a cron expression/);
    t.equal((await a.post('settings.updateLogCleanup', { cronExpression: 'x'.repeat(101) })).status, 400, 'at most 100 characters');
    t.same((await a.get('settings.getLogCleanupStatus')).body, { enabled: true, cronExpression: '*/15 * * * *' }, 'a refused one changes nothing');
    t.same((await a.post('settings.updateLogCleanup', { cronExpression: null })).body, true, 'null: off (REST form)');
    t.same((await a.get('settings.getLogCleanupStatus')).body, { enabled: false, cronExpression: null });
    await a.post('settings.updateLogCleanup', { cronExpression: '0 3 * * *' });
    t.same((await a.post('settings.updateLogCleanup', { cronExpression: '' })).body, true, '"" is off too, as the peer');
    t.same((await a.get('settings.getLogCleanupStatus')).body, { enabled: false, cronExpression: null });
    t.equal((await member.client.post('settings.updateLogCleanup', { cronExpression: null })).status, 403, 'a member may not');
    t.equal((await other.client.post('settings.updateLogCleanup', { cronExpression: null })).status, 403, "nor another organization's owner");
    t.equal((await other.client.get('settings.getLogCleanupStatus')).status, 403, 'nor read it');
  });
});

t.test("this machine's proxy: its health, and its access log trimmed on schedule", async t => {
  const PROXY = `berth-test-care-proxy-${randomBytes(3).toString('hex')}`;
  const server = await startTestServer({
    proxy: 'traefik',
    // Traefik cannot run here: a stand-in image holds the service (its files, its container and the signal are what is tested).
    proxyImage: TEST_STATIC_IMAGE,
    proxyHttpPort: await freePort(),
    proxyHttpsPort: await freePort(),
    providers: { proxy: { traefik: { options: { serviceName: PROXY } } } },
  });
  t.teardown(async () => {
    await docker
      .getService(PROXY)
      .remove()
      .catch(() => undefined);
    await server.destroy();
  });
  const { client: a } = await signUpAdmin(server);
  const health = async () => data(await a.trpc('query', 'settings.checkInfrastructureHealth')).traefik as { status: string; message?: string };

  t.match(await health(), { status: 'unhealthy', message: /The traefik proxy service is not running on this machine/ }, 'not started yet');
  t.equal((await a.post('settings.reloadTraefik', {})).status, 200, 'the proxy started');
  await waitFor('the proxy healthy', async () => (await health()).status === 'healthy', { timeout: 60_000 });
  t.pass('healthy once its task runs');

  t.test('the access log keeps its last lines, and the proxy reopens it', async t => {
    t.same((await a.post('settings.toggleRequests', { enable: true })).body, true, 'requests recorded');
    const configDir = server.kernel.container.cradle.providers.get('proxy', 'traefik').configDir;
    const file = path.join(configDir, 'dynamic', 'access.log');
    const lines = Array.from({ length: 1500 }, (_, i) => JSON.stringify({ RequestHost: 'a.example.com', n: i }));
    writeFileSync(file, `${lines.join('\n')}\n`);
    const before = (await docker.listContainers({ filters: JSON.stringify({ label: [`com.docker.swarm.service.name=${PROXY}`], status: ['running'] }) }))[0];
    t.ok(before, 'the proxy has a running container');

    const { accessLogCleanup } = server.kernel.container.cradle;
    t.same((await a.post('settings.updateLogCleanup', { cronExpression: '0 0 * * *' })).body, true);
    const now = new Date();
    t.equal(await accessLogCleanup.tick(now), null, 'nothing due in the window the schedule was set in');
    t.equal(readFileSync(file, 'utf8').split('\n').length - 1, 1500, 'the log untouched');
    const trimmed = await accessLogCleanup.tick(new Date(now.getTime() + 24 * 3600_000 + 1000));
    t.match(trimmed, { file, removedBytes: Number }, 'the next midnight passed: trimmed');
    const kept = readFileSync(file, 'utf8').trimEnd().split('\n');
    t.equal(kept.length, KEPT_LINES, `the last ${KEPT_LINES} lines kept`);
    t.equal(kept[0], lines[500]);
    t.equal(kept.at(-1), lines.at(-1));
    t.equal(await accessLogCleanup.tick(new Date(now.getTime() + 24 * 3600_000 + 2000)), null, 'the same window is not handled twice');
    // SIGUSR1 is how Traefik reopens its log; the stand-in has no handler, so it ends by that signal (128 + 10).
    const ended = await waitFor('the stand-in ended by SIGUSR1', async () => {
      const s = (await docker.getContainer(before!.Id).inspect()).State;
      return s.Running ? null : s;
    });
    t.equal(ended.ExitCode, 138, 'the proxy got SIGUSR1');
  });

  t.test('scaled to nothing, it is unhealthy', async t => {
    const service = docker.getService(PROXY);
    const spec = (await service.inspect()) as { Version: { Index: number }; Spec: Record<string, any> };
    await service.update({ ...spec.Spec, Mode: { Replicated: { Replicas: 0 } }, version: spec.Version.Index });
    t.match(await health(), { status: 'unhealthy', message: `Service ${PROXY} has 0 replicas configured` });
  });
});

if (canRun(t, 'remote-hosts', remoteHostsMissing())) {
  t.test('a server of the organization, reached over SSH', async t => {
    const set = await sharedRemoteHosts(1);
    const h = set.hosts[0]!;
    const server = await startTestServer({ proxy: 'none' });
    t.teardown(() => server.destroy());
    const { client: a, userId } = await signUpAdmin(server);
    const member = await addMember(server, a, 'member@example.com', 'member');
    const other = await otherOrganization(server, userId);
    const key = await a.post('sshKey.create', { name: 'kit host', privateKey: h.privateKey, publicKey: h.publicKey });
    const added = await a.post('server.create', { name: 'kit host', ipAddress: h.address, port: 22, username: h.user, sshKeyId: key.body.sshKeyId, hostKeyFingerprint: h.hostKeyFingerprint });
    t.equal(added.status, 200, JSON.stringify(added.body));
    const serverId = added.body.serverId as string;

    const { rest, trpc } = await both(a, 'query', 'settings.checkGPUStatus', { serverId });
    for (const r of [rest, trpc]) {
      t.equal(r.status, 200, JSON.stringify(r.body));
      t.match(data(r), { driverInstalled: false, runtimeInstalled: false, cudaSupport: false, availableGPUs: 0, swarmEnabled: false, gpuResources: 0 }, 'no GPU there either');
    }
    const setup = await a.trpc('mutation', 'settings.setupGPU', { serverId });
    t.equal(setup.status, 409);
    t.match(JSON.stringify(setup.body), new RegExp(`NVIDIA drivers not installed on server ${serverId}`));
    t.equal((await member.client.get('settings.checkGPUStatus', { serverId })).status, 403, 'a member may not');
    t.equal((await other.client.get('settings.checkGPUStatus', { serverId })).status, 404, "another organization's server is not found");
    t.equal((await other.client.post('settings.setupGPU', { serverId })).status, 404);
  });
}
