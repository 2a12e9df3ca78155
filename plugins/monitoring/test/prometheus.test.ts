// GET /metrics in Prometheus' text format, through the real kernel, collector, engine and
// PostgreSQL: this machine's figures against what the kernel says at the same moment (memory ±2 %
// of MemTotal, the root filesystem ±1 %), a workload's container, the request and deployment
// counters — and who sees what: no credential is a 401, a scraper of another organization that is
// not the instance owner sees neither this machine nor the first organization's workloads.
import { readFileSync, statfsSync } from 'node:fs';
import Docker from 'dockerode';
import t, { type Test } from 'tap';
import { addMember, otherOrganization, runFinished, signUpAdmin, startTestServer, TEST_BASE_IMAGE, waitFor, type Reply } from '@berth/core/testing';

const docker = new Docker();

/** The samples of a text exposition: name, labels, value; a line of any other form fails the test. */
function parse(t: Test, text: string) {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  const typed = new Set<string>();
  for (const line of text.trimEnd().split('\n')) {
    const type = /^# TYPE (\w+) (gauge|counter)$/.exec(line);
    if (type) typed.add(type[1]!);
    if (line.startsWith('#')) continue;
    const m = /^([a-z_]+)(?:\{(.*)\})? (-?[0-9.e+]+|NaN)$/.exec(line);
    if (!m) {
      t.fail(`not an exposition line: ${line}`);
      continue;
    }
    if (!typed.has(m[1]!)) t.fail(`${m[1]} has no TYPE line before its samples`);
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => [k!, v!]));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

t.test('GET /metrics', async t => {
  const server = await startTestServer({ deploySettleSeconds: 0 });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const setup = await admin.client.post('admin.setupMonitoring', {
    metricsConfig: {
      server: { refreshRate: 2, port: 4500, token: 'prometheus-test', urlCallback: 'http://127.0.0.1:9/cb', retentionDays: 1, cronJob: '0 0 * * *', thresholds: { cpu: 0, memory: 0 } },
      containers: { refreshRate: 2, services: { include: [], exclude: [] } },
    },
  });
  t.equal(setup.status, 200, JSON.stringify(setup.body));
  // A workload of the first organization: a container holding 32 MiB in a tmpfs.
  const probe = `prom-probe-${process.pid}`;
  await docker
    .getContainer(probe)
    .remove({ force: true })
    .catch(() => undefined);
  const container = await docker.createContainer({
    name: probe,
    Image: TEST_BASE_IMAGE,
    Cmd: ['sh', '-c', 'head -c 33554432 /dev/zero > /mem/f; exec sleep 3600'],
    Labels: { 'berth.id': probe, 'berth.kind': 'probe', 'berth.organization': admin.organizationId },
    HostConfig: { Init: true, Tmpfs: { '/mem': 'size=64m' } },
  });
  await container.start();
  t.teardown(() => container.remove({ force: true }).catch(() => undefined));

  const scrape = (headers: Record<string, string>) => admin.client.raw('/metrics', { headers });
  const asAdmin = () => scrape({ 'x-api-key': admin.apiKey });

  t.test('this machine and the workload, as the collector saw them', async t => {
    const reply = await waitFor(
      "this machine's figures and the probe's",
      async () => {
        const r = await asAdmin();
        return r.status === 200 && String(r.body).includes(`app="${probe}"`) && String(r.body).includes('berth_host_memory_used_bytes{server="local"}') ? r : undefined;
      },
      { timeout: 60_000, interval: 500 },
    );
    t.match(reply.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
    // The kernel's figures right after the scrape; the sample is at most one refresh (2 s) older.
    const meminfo = readFileSync('/proc/meminfo', 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(meminfo)![1]) * 1024;
    const fs = statfsSync('/');
    const samples = parse(t, String(reply.body));
    const one = (name: string, labels: Record<string, string>) => samples.find(s => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    const local = { server: 'local' };
    t.equal(one('berth_host_memory_total_bytes', local)?.value, kb('MemTotal'), 'MemTotal');
    const used = one('berth_host_memory_used_bytes', local)!.value;
    t.ok(Math.abs(used - (kb('MemTotal') - kb('MemAvailable'))) <= 0.02 * kb('MemTotal'), `memory used ${used} within 2 % of MemTotal of the kernel's`);
    const cpu = one('berth_host_cpu_usage_ratio', local)!.value;
    t.ok(cpu >= 0 && cpu <= 1, `cpu ratio ${cpu} in [0, 1]`);
    const root = one('berth_host_disk_used_bytes', { ...local, mount: '/' })!.value;
    // Size less what is available, reserved blocks counted as used, as df's Use% (and the peer's figures).
    const rootUsed = (fs.blocks - fs.bavail) * fs.bsize;
    t.ok(Math.abs(root - rootUsed) <= 0.01 * fs.blocks * fs.bsize, `/ used ${root} within 1 % of statfs (${rootUsed})`);
    t.equal(one('berth_host_disk_size_bytes', { ...local, mount: '/' })?.value, fs.blocks * fs.bsize, "/'s size");
    const lo = one('berth_host_network_receive_bytes_total', { ...local, device: 'lo' })!.value;
    const loNow = Number(/^\s*lo:\s*(\d+)/m.exec(readFileSync('/proc/net/dev', 'utf8'))![1]);
    t.ok(lo > 0 && lo <= loNow, `lo received ${lo}, not more than the kernel's counter now (${loNow})`);
    const held = one('berth_container_memory_used_bytes', { ...local, app: probe })!.value;
    t.ok(held >= 32 * 1024 ** 2 && held < 48 * 1024 ** 2, `the probe holds its 32 MiB (${held})`);
    t.ok(one('berth_container_cpu_usage_ratio', { ...local, app: probe }), "the probe's CPU");
    t.ok(one('berth_http_requests_total', { code: '200' })!.value >= 2, 'the requests answered so far');
  });

  t.test('the request and deployment counters move', async t => {
    const count = (r: Reply, name: string, labels: Record<string, string>) =>
      parse(t, String(r.body)).find(s => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? 0;
    const before = await asAdmin();
    t.equal((await scrape({})).status, 401, 'no credential: 401');
    t.equal((await scrape({ 'x-api-key': 'not-a-key' })).status, 401, 'a wrong key: 401');
    const { environment } = (await admin.client.post('project.create', { name: 'counted' })).body;
    const app = (await admin.client.post('application.create', { name: 'counted', environmentId: environment.environmentId })).body;
    // sleep as PID 1 ignores SIGTERM: its removal waits 1 s, not the default 10, before the kill.
    await admin.client.post('application.update', { applicationId: app.applicationId, command: 'sleep', args: ['3600'], stopGracePeriodSwarm: 1_000_000_000 });
    await admin.client.post('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_BASE_IMAGE });
    t.teardown(() => admin.client.post('application.delete', { applicationId: app.applicationId }));
    t.equal((await runFinished(admin.client, 'application.deploy', { applicationId: app.applicationId })).status, 'done');
    // The bearer token works as the API key does.
    const after = await scrape({ authorization: `Bearer ${admin.token}` });
    t.equal(after.status, 200);
    t.equal(count(after, 'berth_http_requests_total', { code: '401' }), count(before, 'berth_http_requests_total', { code: '401' }) + 2, 'the two 401s counted');
    t.equal(count(after, 'berth_deployments_total', { status: 'done' }), count(before, 'berth_deployments_total', { status: 'done' }) + 1, 'the deploy counted as done');
  });

  t.test("another organization's scraper, not the instance owner", async t => {
    const member = await addMember(server, admin.client, 'scraper@example.com', 'admin');
    const other = await otherOrganization(server, member.userId);
    const r = await other.client.raw('/metrics', { headers: { 'x-api-key': other.client.apiKey! } });
    t.equal(r.status, 200);
    const body = String(r.body);
    t.notMatch(body, /server="local"/, "not this machine's figures");
    t.notMatch(body, new RegExp(probe), "nor the first organization's workload");
    t.notMatch(body, /berth_http_requests_total/, "nor the instance's request counts");
    t.notMatch(body, /berth_deployments_total/, "nor the first organization's deployments");
  });
});
