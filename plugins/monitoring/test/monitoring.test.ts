// Monitoring through the real kernel, engine and PostgreSQL: containers under a known load read
// back through user.getContainerMetrics, this machine's figures through server.getServerMetrics
// against what the kernel says, the url and token rules (no request ever leaves Berth), cleanMonitoring, a
// threshold that alerts once and says "back to normal" once (to the urlCallback in the peer's
// receiveNotification body, and to a notification channel), and a deployed app that crash-loops
// after its deploy reported done: one appHealth, then one `recovered`; a task killed for memory
// and one failing its health check: one `oom` and one `unhealthy` while they go on.
import { existsSync, readFileSync, statfsSync } from 'node:fs';
import Docker from 'dockerode';
import t, { type Test } from 'tap';
import { otherOrganization, removeServiceAndVolume, signUpAdmin, startHttpSink, startTestServer, TEST_BASE_IMAGE, waitFor, type Client } from '@berth/core/testing';

const docker = new Docker();

/**
 * Resolves once the engine has reported `count` more of `action` events ('die', 'oom',
 * 'health_status') of the service's containers, counted from this call: what the monitor reads too,
 * so when it resolves, the trouble has gone on that many times since the report.
 */
async function goesOn(appName: string, action: string, count: number): Promise<void> {
  // cast: getEvents answers a stream; dockerode types it loosely.
  const stream = (await docker.getEvents({ filters: { type: ['container'], event: [action], label: [`com.docker.swarm.service.name=${appName}`] } })) as unknown as NodeJS.ReadableStream & {
    destroy(): void;
  };
  let seen = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${appName}: ${seen} of ${count} more ${action} events within 90 s`)), 90_000);
      stream.on('data', (chunk: Buffer) => {
        seen += chunk
          .toString('utf8')
          .split('\n')
          .filter(l => l.trim()).length;
        if (seen >= count) {
          clearTimeout(timer);
          resolve();
        }
      });
      stream.on('error', reject);
    });
  } finally {
    stream.destroy();
  }
}
const TOKEN = 'local-monitoring-token';
const MiB = 1024 ** 2;

const config = (port: number, over: { thresholds?: Record<string, number>; urlCallback?: string; thresholdSamples?: number } = {}) => ({
  server: {
    refreshRate: 2,
    port,
    token: TOKEN,
    urlCallback: over.urlCallback ?? 'http://127.0.0.1:9/api/trpc/notification.receiveNotification',
    retentionDays: 2,
    cronJob: '0 0 * * *',
    thresholds: { cpu: 0, memory: 0, ...over.thresholds },
    thresholdSamples: over.thresholdSamples ?? 2,
    thresholdCooldownMinutes: 30,
  },
  containers: { refreshRate: 2, services: { include: [], exclude: [] } },
});

async function labelled(name: string, organizationId: string, cmd: string[], hostConfig: Docker.HostConfig): Promise<Docker.Container> {
  await docker
    .getContainer(name)
    .remove({ force: true })
    .catch(() => undefined);
  const c = await docker.createContainer({
    name,
    Image: TEST_BASE_IMAGE,
    Cmd: cmd,
    Labels: { 'berth.id': name, 'berth.kind': 'probe', 'berth.organization': organizationId },
    HostConfig: { Init: true, ...hostConfig },
  });
  await c.start();
  return c;
}

t.test('monitoring without an agent', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0, monitoringRecoverySeconds: 8 });
  t.teardown(() => server.destroy());
  const { client, organizationId, userId } = await signUpAdmin(server);
  // The address getServerMetrics is given: a listener that must never see a request.
  const watched = await startHttpSink(t);
  const port = Number(new URL(watched.url).port);
  const base = `http://127.0.0.1:${port}`;

  const setup = await client.post('admin.setupMonitoring', { metricsConfig: config(port) });
  t.equal(setup.status, 200, JSON.stringify(setup.body));
  t.match(setup.body, { metricsConfig: { server: { type: 'Dokploy', refreshRate: 2, port, token: TOKEN, thresholdSamples: 2 }, containers: { refreshRate: 2 } } });

  t.test('containers under a known load read back within their figures', async t => {
    // Half a core, busy all the time; 48 MiB held in a tmpfs (counted in the container's memory).
    const burn = await labelled('mon-burn', organizationId, ['sh', '-c', 'while :; do :; done'], { NanoCpus: 500_000_000 });
    const held = await labelled('mon-held', organizationId, ['sh', '-c', 'head -c 50331648 /dev/zero > /mem/f; exec sleep 3600'], { Memory: 256 * MiB, Tmpfs: { '/mem': 'size=100m' } });
    t.teardown(async () => {
      await burn.remove({ force: true }).catch(() => undefined);
      await held.remove({ force: true }).catch(() => undefined);
    });
    const read = (appName: string, dataPoints = '3') => client.get('user.getContainerMetrics', { url: base, token: TOKEN, appName, dataPoints });
    // The reference: the container's own cgroup counter (ns of CPU), polled every 100 ms.
    const counter = [`/sys/fs/cgroup/cpuacct/docker/${burn.id}/cpuacct.usage`, `/sys/fs/cgroup/docker/${burn.id}/cpu.stat`].find(f => existsSync(f));
    const usage = () => {
      const text = readFileSync(counter!, 'utf8');
      return text.includes('usage_usec') ? Number(/usage_usec (\d+)/.exec(text)![1]) * 1000 : Number(text);
    };
    const polled: [number, number][] = [];
    const poller = setInterval(() => polled.push([Date.now(), usage()]), 100);
    t.teardown(() => clearInterval(poller));
    const burnt = await waitFor(
      'six samples of the busy container',
      async () => {
        const r = (await read('mon-burn', '6')).body;
        return r?.length >= 6 && Date.parse(r[0].timestamp) > polled[0]![0] ? r : null;
      },
      { timeout: 60_000, interval: 500 },
    );
    clearInterval(poller);
    t.match(burnt[0], { timestamp: String, CPU: Number, Memory: { usedUnit: 'MB', totalUnit: 'MB' }, Network: Object, BlockIO: Object, ID: String, Name: 'mon-burn' });
    // Over the samples' span: what the cgroup counted, against the interval-weighted mean of the samples.
    const at = (ms: number) => {
      const i = polled.findIndex(([when]) => when >= ms);
      const [t1, u1] = polled[Math.max(1, i)]!;
      const [t0, u0] = polled[Math.max(1, i) - 1]!;
      return u0 + ((u1 - u0) * (ms - t0)) / Math.max(1, t1 - t0);
    };
    const times = burnt.map((s: { timestamp: string }) => Date.parse(s.timestamp));
    const from = times[0];
    const to = times.at(-1);
    const reference = ((at(to) - at(from)) / 1e6 / (to - from)) * 100;
    let weighted = 0;
    for (let i = 1; i < burnt.length; i++) weighted += burnt[i].CPU * (times[i] - times[i - 1]);
    const measured = weighted / (to - from);
    t.ok(Math.abs(measured - reference) < 5, `CPU over ${((to - from) / 1000).toFixed(1)} s: ${measured.toFixed(1)} % of a core sampled, ${reference.toFixed(1)} % counted by the cgroup`);
    t.ok(
      burnt.every((s: { CPU: number }) => s.CPU <= 53),
      'never above the half-core quota',
    );
    const memory = await waitFor('the held memory sampled', async () => {
      const r = (await read('mon-held')).body;
      const last = r?.at(-1);
      return last && last.Memory.used >= 48 ? last : null;
    });
    t.ok(memory.Memory.used >= 48 && memory.Memory.used < 56, `48 MiB held, ${memory.Memory.used} MB read`);
    t.equal(memory.Memory.total, 256, 'the limit');
    t.ok(Math.abs(memory.Memory.percentage - (memory.Memory.used / 256) * 100) < 0.1);
  });

  t.test("this machine's figures agree with the kernel", async t => {
    const samples = await waitFor('two host samples', async () => {
      const r = await client.get('server.getServerMetrics', { url: `${base}/metrics`, token: TOKEN, dataPoints: 'all' });
      return r.status === 200 && r.body.length >= 2 ? r.body : null;
    });
    const last = samples.at(-1);
    t.match(last, {
      cpu: /^\d+\.\d\d$/,
      cpuCores: Number,
      memUsed: /^\d+\.\d\d$/,
      memTotal: /^\d+\.\d\d$/,
      diskUsed: /^\d+\.\d\d$/,
      totalDisk: /^\d+\.\d\d$/,
      networkIn: /^\d+\.\d\d$/,
      uptime: Number,
      timestamp: String,
      kernel: String,
      arch: String,
    });
    const meminfo = readFileSync('/proc/meminfo', 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(meminfo)![1]);
    const memPercent = ((kb('MemTotal') - kb('MemAvailable')) / kb('MemTotal')) * 100;
    t.ok(Math.abs(Number(last.memUsed) - memPercent) < 2, `memory within 2 % of MemTotal: ${last.memUsed} vs ${memPercent.toFixed(2)}`);
    t.equal(Number(last.memTotal), Number((kb('MemTotal') / 1024 ** 2).toFixed(2)), 'MemTotal in GiB');
    const fs = statfsSync('/');
    const diskPercent = ((fs.blocks - fs.bavail) / fs.blocks) * 100;
    t.ok(Math.abs(Number(last.diskUsed) - diskPercent) < 1, `disk within 1 %: ${last.diskUsed} vs ${diskPercent.toFixed(2)}`);
    t.ok(Number(last.cpu) >= 0 && Number(last.cpu) <= 100);
    const two = await client.get('server.getServerMetrics', { url: `${base}/metrics`, token: TOKEN, dataPoints: '1' });
    t.equal(two.body.length, 1, 'dataPoints counts the latest samples');
  });

  t.test('url names one of your hosts, the token is checked, nothing is fetched', async t => {
    const bad = await client.get('server.getServerMetrics', { url: 'not a url', token: TOKEN, dataPoints: '5' });
    t.equal(bad.status, 400);
    t.match(bad.body.issues, [{ path: ['url'] }]);
    const foreign = await client.get('server.getServerMetrics', { url: 'http://10.9.9.9:4500/metrics', token: TOKEN, dataPoints: '5' });
    t.equal(foreign.status, 400);
    t.equal((await client.get('server.getServerMetrics', { url: `${base}/elsewhere`, token: TOKEN, dataPoints: '5' })).status, 400, 'another path');
    t.equal((await client.get('server.getServerMetrics', { url: `${base}/metrics`, token: 'wrong', dataPoints: '5' })).status, 401, 'a wrong token');
    t.equal((await client.get('server.getServerMetrics', { url: `${base}/metrics`, token: TOKEN, dataPoints: 'many' })).status, 400, 'dataPoints: a count or all');
    t.equal((await client.get('user.getContainerMetrics', { url: base, token: 'wrong', appName: 'mon-burn', dataPoints: '5' })).status, 401);

    // Another organization's server, set up with its own port and token, is the same 400 to us.
    const other = await otherOrganization(server, userId);
    const created = await other.client.post('server.create', { name: 'theirs', ipAddress: '10.200.0.7', port: 22, sshKeyId: null });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const theirs = { ...config(4599), server: { ...config(4599).server, token: 'their-token', refreshRate: 3600 }, containers: { refreshRate: 3600, services: {} } };
    const set = await other.client.post('server.setupMonitoring', { serverId: created.body.serverId, metricsConfig: theirs });
    t.equal(set.status, 200, JSON.stringify(set.body));
    t.match(set.body, { serverId: created.body.serverId, metricsConfig: { server: { type: 'Remote', port: 4599, token: 'their-token' } } });
    t.equal((await client.post('server.setupMonitoring', { serverId: created.body.serverId, metricsConfig: config(4599) })).status, 404, 'not ours to set up');
    const asUs = await client.get('server.getServerMetrics', { url: 'http://10.200.0.7:4599/metrics', token: 'their-token', dataPoints: '5' });
    t.equal(asUs.status, 400);
    t.same(asUs.body.message, foreign.body.message, 'indistinguishable from an address that is nobody’s');
    const asThem = await other.client.get('server.getServerMetrics', { url: 'http://10.200.0.7:4599/metrics', token: 'their-token', dataPoints: '5' });
    t.equal(asThem.status, 200, 'theirs to read');
    t.equal(watched.requests.length, 0, 'no request left Berth');
    const count = async () => (await client.get('server.getServerMetrics', { url: `${base}/metrics`, token: TOKEN, dataPoints: 'all' })).body.length as number;
    const before = await count();
    t.same((await client.post('settings.cleanMonitoring', {})).body, true);
    t.ok((await count()) < Math.min(before, 2), `the samples dropped (${before} before)`);
  });

  t.test('a threshold alerts once, to the urlCallback and the channels, then back to normal once', async t => {
    const callback = await startHttpSink(t);
    const channelSink = await startHttpSink(t);
    const channel = await client.post('notification.createCustom', {
      name: 'ops',
      appDeploy: false,
      appBuildError: false,
      databaseBackup: false,
      dockerCleanup: false,
      dokployRestart: false,
      serverThreshold: true,
      appHealth: true,
      endpoint: `${channelSink.url}/hook`,
    });
    t.equal(channel.status, 200, JSON.stringify(channel.body));
    const notificationId = channel.body.notificationId;
    const deliveries = async () => (await client.get('notification.deliveries', { notificationId })).body as { event: string; title: string }[];
    // Memory above 1 % on every sample: two in a row alert.
    await client.post('admin.setupMonitoring', { metricsConfig: config(port, { thresholds: { memory: 1 }, urlCallback: `${callback.url}/alerts` }) });
    await waitFor('the alert at the urlCallback', () => callback.requests.length > 0, { timeout: 30_000 });
    const body = JSON.parse(callback.requests[0]!.body);
    t.match(body, { ServerType: 'Dokploy', Type: 'Memory', Value: Number, Threshold: 1, Message: String, Timestamp: String, Token: TOKEN });
    await waitFor('the alert in the channel', async () => (await deliveries()).some(d => d.event === 'serverThreshold'));
    // Three more samples above: nothing more.
    const samplesNow = (await client.get('server.getServerMetrics', { url: `${base}/metrics`, token: TOKEN, dataPoints: 'all' })).body.length;
    await waitFor('three more samples', async () => (await client.get('server.getServerMetrics', { url: `${base}/metrics`, token: TOKEN, dataPoints: 'all' })).body.length >= samplesNow + 3, {
      timeout: 30_000,
    });
    t.equal(callback.requests.length, 1, 'one alert while it stays above');
    t.equal((await deliveries()).filter(d => d.event === 'serverThreshold').length, 1);
    await client.post('admin.setupMonitoring', { metricsConfig: config(port, { thresholds: { memory: 99 }, urlCallback: `${callback.url}/alerts` }) });
    const back = await waitFor('back to normal', async () => {
      const d = (await deliveries()).filter(x => x.event === 'serverThreshold');
      return d.length >= 2 ? d : null;
    });
    t.match(back[0]!.title, /back to normal/, 'newest first: back to normal');
    t.match(back[1]!.title, /Memory above 1%/);
    await client.post('admin.setupMonitoring', { metricsConfig: config(port) });
  });

  /** A custom channel of appHealth only, at a sink of the test: what it was sent, and the deliveries Berth recorded. */
  const healthChannel = async (t: Test, name: string) => {
    const channelSink = await startHttpSink(t);
    const channel = await client.post('notification.createCustom', {
      name,
      appDeploy: false,
      appBuildError: false,
      databaseBackup: false,
      dockerCleanup: false,
      dokployRestart: false,
      serverThreshold: false,
      appHealth: true,
      endpoint: `${channelSink.url}/hook`,
    });
    const notificationId = channel.body.notificationId;
    const health = async () => ((await client.get('notification.deliveries', { notificationId })).body as { event: string; title: string }[]).filter(d => d.event === 'appHealth');
    return { channelSink, health };
  };

  t.test('an app that crash-loops after a done deploy is reported once, and recovered once', async t => {
    const { channelSink, health } = await healthChannel(t, 'health');
    const project = await client.post('project.create', { name: 'flaky' });
    const app = (await client.post('application.create', { name: 'flaky', environmentId: project.body.environment.environmentId })).body;
    t.teardown(() => removeServiceAndVolume(app.appName));
    await client.post('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_BASE_IMAGE });
    const updated = await client.post('application.update', {
      applicationId: app.applicationId,
      command: 'sh',
      args: ['-c', 'sleep 3; echo boom; exit 3'],
      restartPolicySwarm: { Condition: 'any', Delay: 200_000_000 },
      // sleep as PID 1 ignores SIGTERM: the redeploy below waits 1 s, not the default 10, for the old task.
      stopGracePeriodSwarm: 1_000_000_000,
    });
    t.equal(updated.status, 200, JSON.stringify(updated.body));
    t.equal((await client.post('application.deploy', { applicationId: app.applicationId })).status, 200);
    await waitFor('the deploy done', async () => (await client.get('application.one', { applicationId: app.applicationId })).body.applicationStatus === 'done', { timeout: 120_000, interval: 100 });
    const looped = await waitFor('the crash loop reported', async () => ((await health()).length ? await health() : null), { timeout: 60_000 });
    t.match(looped[0]!.title, `${app.appName}: crashLoop`);
    await waitFor('the report delivered', () => channelSink.requests.length > 0);
    t.match(channelSink.requests[0]!.body, /boom/, 'with its last log lines');
    t.match(channelSink.requests[0]!.body, /exit code 3/, 'and its exit code');
    // It goes on crashing (three more exits, seen on the engine's event stream as the monitor sees
    // them): nothing more.
    await goesOn(app.appName, 'die', 3);
    t.same(
      (await health()).map(h => h.title),
      [`${app.appName}: crashLoop`],
      'one report while it flaps',
    );
    await client.post('application.update', { applicationId: app.applicationId, command: 'sleep', args: ['3600'] });
    t.equal((await client.post('application.redeploy', { applicationId: app.applicationId })).status, 200);
    const recovered = await waitFor(
      'recovered',
      async () => {
        const h = await health();
        return h.length >= 2 ? h : null;
      },
      { timeout: 90_000 },
    );
    t.match(recovered[0]!.title, `${app.appName}: recovered`);
    t.equal(recovered.length, 2, 'one crashLoop, one recovered');
  });

  t.test("application.readAppMonitoring: a workload's latest figures in the peer's shape; this machine's as dokploy, to operators only", async t => {
    const project = await client.post('project.create', { name: 'watched' });
    const app = (await client.post('application.create', { name: 'watched', environmentId: project.body.environment.environmentId })).body;
    t.teardown(() => removeServiceAndVolume(app.appName));
    await client.post('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_BASE_IMAGE });
    await client.post('application.update', { applicationId: app.applicationId, command: 'sleep', args: ['3600'], stopGracePeriodSwarm: 1_000_000_000 });
    t.equal((await client.post('application.deploy', { applicationId: app.applicationId })).status, 200);
    const figures = await waitFor(
      'two samples of the application',
      async () => {
        const r = await client.get('application.readAppMonitoring', { appName: app.appName });
        return r.status === 200 && r.body?.cpu.length >= 2 ? r.body : null;
      },
      { timeout: 120_000, interval: 500 },
    );
    t.match(figures.cpu.at(-1), { value: /^\d+\.\d\d%$/, time: String });
    t.match(figures.memory.at(-1), { value: { used: /^\d+(\.\d\d)?(B|KiB|MiB|GiB)$/, total: /^\d+(\.\d\d)?(B|KiB|MiB|GiB)$/ } });
    t.match(figures.network.at(-1), { value: { inputMb: /^\d+\.\d\d$/, outputMb: /^\d+\.\d\d$/ } }, 'MB as strings, as the peer answers them');
    t.match(figures.block.at(-1), { value: { readMb: /^\d+\.\d\d$/, writeMb: /^\d+\.\d\d$/ } });
    t.same(figures.disk, [], "a container's figures have no disk (this machine's have)");
    t.equal(figures.cpu.length, figures.memory.length, 'one point per sample in each figure');
    const trpc = await client.trpc('query', 'application.readAppMonitoring', { appName: app.appName });
    t.ok(trpc.body.result.data.json.cpu.length >= 2, 'tRPC answers it too');
    const host = (await client.get('application.readAppMonitoring', { appName: 'dokploy' })).body;
    t.ok(host.cpu.length >= 1 && host.disk.length === host.cpu.length, "dokploy: this machine's figures, disk included");
    t.match(host.disk.at(-1), { value: { diskTotal: Number, diskUsedPercentage: Number, diskUsage: Number, diskFree: Number } });
    t.same(host.block, [], 'the host has no block figures');
    const other = await otherOrganization(server, userId);
    t.equal((await other.client.get('application.readAppMonitoring', { appName: app.appName })).status, 404, "another organization's workload is not found");
    const refused = await other.client.get('application.readAppMonitoring', { appName: 'dokploy' });
    t.equal(refused.status, 403, 'this machine is the operators');
    t.match(refused.body.message, /^appName: /);
    t.equal((await client.get('application.readAppMonitoring', { appName: 'no-such-app' })).status, 404);
  });

  t.test('a task killed for memory is reported as oom, one failing its health check as unhealthy, once each', async t => {
    const { channelSink, health } = await healthChannel(t, 'oom and health');
    const project = await client.post('project.create', { name: 'troubled' });
    const app = async (name: string, settings: Record<string, unknown>) => {
      const a = (await client.post('application.create', { name, environmentId: project.body.environment.environmentId })).body;
      t.teardown(() => removeServiceAndVolume(a.appName));
      await client.post('application.saveDockerProvider', { applicationId: a.applicationId, dockerImage: TEST_BASE_IMAGE });
      const updated = await client.post('application.update', { applicationId: a.applicationId, ...settings });
      t.equal(updated.status, 200, JSON.stringify(updated.body));
      t.equal((await client.post('application.deploy', { applicationId: a.applicationId })).status, 200);
      return a as { applicationId: string; appName: string };
    };
    // 16 MiB of memory, then 64 MiB read through a pipe's buffer: the kernel kills it, and again after each restart.
    const greedy = await app('greedy', {
      command: 'sh',
      args: ['-c', 'echo hungry; sleep 2; head -c 67108864 /dev/zero | tail > /dev/null'],
      memoryLimit: '16m',
      restartPolicySwarm: { Condition: 'any', Delay: 1_000_000_000 },
    });
    // Running, but its health check fails from the start.
    // sleep as PID 1 ignores SIGTERM: a grace of 1 s, not the default 10, before each unhealthy task is killed.
    const sick = await app('sick', {
      command: 'sleep',
      args: ['3600'],
      stopGracePeriodSwarm: 1_000_000_000,
      healthCheckSwarm: { Test: ['CMD', 'false'], Interval: 1_000_000_000, Timeout: 1_000_000_000, Retries: 1, StartPeriod: 0 },
    });
    const reported = await waitFor(
      'both reported',
      async () => {
        const titles = (await health()).map(h => h.title);
        return titles.some(x => x.startsWith(`${greedy.appName}: oom`)) && titles.some(x => x.startsWith(`${sick.appName}: unhealthy`)) ? titles : null;
      },
      { timeout: 90_000 },
    );
    // It goes on: killed again after each restart, unhealthy task after task (two more of each, on
    // the engine's event stream); nothing more.
    await Promise.all([goesOn(greedy.appName, 'oom', 2), goesOn(sick.appName, 'health_status', 2)]);
    const titles = (await health()).map(h => h.title);
    t.same(
      titles.filter(x => x.startsWith(`${greedy.appName}:`)),
      [`${greedy.appName}: oom`],
      'one oom while it goes on being killed',
    );
    t.same(
      titles.filter(x => x.startsWith(`${sick.appName}:`)),
      [`${sick.appName}: unhealthy`],
      'one unhealthy while it stays so',
    );
    t.ok(reported.length >= 2);
    await waitFor('the reports delivered', () => channelSink.requests.length >= 2);
    t.match(channelSink.requests.map(r => r.body).join('\n'), /killed for memory \(OOM\)/, 'the oom report says why');
  });
});
