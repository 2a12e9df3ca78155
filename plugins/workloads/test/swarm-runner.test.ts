// The Swarm runner against the real engine: services that answer on their ports, updates
// that replace the tasks, failures reported with the engine's reason, cancellation, scale,
// restart, logs and removal. Only the local test image is used (nothing can be pulled).
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Hosts } from '@berth/plugin-hosts';
import localHost from '@berth/provider-host-local';
import { SwarmRunner, SwarmTaskError, deployService, serviceExists, serviceLogs } from '../src/swarm/runner.ts';
import type { WorkloadService } from '../src/services.ts';
import { BerthError, type Cradle } from '@berth/core';
import { TEST_BASE_IMAGE, canRun, freePort, waitFor } from '@berth/core/testing';

const errors: unknown[] = [];
const logger = { info() {}, warn() {}, debug() {}, error: (obj: unknown) => void errors.push(obj) };
// The hosts plugin without a kernel: its one provider, host.local, given as the registry would.
const local = await localHost.create({}, { config: {} as never });
const cradle = { providers: { get: () => local } } as unknown as Cradle;
const hosts = new Hosts({ cradle: () => cradle, logger, config: { swarmAdvertiseAddr: '127.0.0.1', platformNetwork: 'berth-network', dataDir: mkdtempSync(path.join(os.tmpdir(), 'berth-runner-')) } });
const docker = await hosts.local();
const runner = new SwarmRunner(docker, hosts, { pollMs: 200 });

// Rollouts, rollbacks and timeouts on the engine take longer than tap's default per-file limit.
t.setTimeout(600_000);

/** The record the test's services belong to (their berth.id label). */
const OWNER = 'swarm-runner-test';
const mine = { owner: OWNER };

const uniqueName = (what: string) => `berth-test-${what}-${randomBytes(4).toString('hex')}`;

/** The body at http://127.0.0.1:port/ once it matches, or the last thing seen after the deadline. */
async function fetchUntil(port: number, want: RegExp, ms = 60_000): Promise<string> {
  const deadline = Date.now() + ms;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
      last = await res.text();
      if (want.test(last)) return last;
    } catch (e) {
      last = `(${(e as Error).message})`;
    }
    await new Promise(r => setTimeout(r, 200));
  }
  return last;
}

async function refused(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) });
    return false;
  } catch {
    return true;
  }
}

/** busybox httpd serving a page with $GREETING, after printing a start line to stdout. */
function web(name: string, port: number, greeting: string, over: Partial<WorkloadService> = {}): WorkloadService {
  return {
    name,
    image: TEST_BASE_IMAGE,
    env: { GREETING: greeting },
    command: 'sh',
    args: ['-c', 'mkdir -p /tmp/www && echo "greeting=$GREETING" > /tmp/www/index.html && echo "started with $GREETING" && exec httpd -f -p 8080 -h /tmp/www'],
    mounts: [],
    ports: [{ targetPort: 8080, publishedPort: port, protocol: 'tcp', publishMode: 'host' }],
    replicas: 1,
    stopGracePeriod: 1_000_000_000,
    ownerLabels: { 'berth.test': 'swarm-runner', 'berth.id': OWNER },
    ...over,
  };
}

function cleanup(t: Test, name: string) {
  t.teardown(async () => {
    // A slow removal must not fail the test that used the service: remove it without waiting then.
    await runner.removeService(name, { ...mine, timeoutMs: 30_000 }).catch(() =>
      docker
        .getService(name)
        .remove()
        .catch(() => undefined),
    );
  });
}

const running = <T extends { state: string; desiredState: string }>(tasks: T[]) => tasks.filter(x => x.state === 'running' && x.desiredState === 'running');

t.test('deploy, update, scale, restart, logs and remove a service', async t => {
  const name = uniqueName('web');
  const port = await freePort();
  cleanup(t, name);
  const lines: string[] = [];

  const first = await runner.deployService(web(name, port, 'one'), { log: l => lines.push(l) });
  t.equal(first.created, true);
  t.equal(first.forceUpdate, 0);
  t.match(await fetchUntil(port, /greeting=one/), /greeting=one/, 'the service answers on its published port');
  t.ok(
    lines.some(l => l.startsWith(`Creating service ${name}`)),
    'logged the creation',
  );
  t.ok(
    lines.some(l => l.includes('1/1 new task(s) running')),
    'logged the progress',
  );
  t.equal(await runner.serviceExists(name, mine), true);
  const inspected = await docker.getService(name).inspect();
  t.same(inspected.Spec.Labels, { 'berth.test': 'swarm-runner', 'berth.id': OWNER }, 'owner labels on the service');

  // A changed env: the new task runs with the new value once deployService resolves.
  const second = await runner.deployService(web(name, port, 'two'));
  t.equal(second.created, false);
  t.equal(second.forceUpdate, 1, 'every deploy raises ForceUpdate');
  const live = running(await runner.serviceTasks(name, mine));
  t.equal(live.length, 1);
  t.equal(live[0]?.forceUpdate, 1, 'the running task is the new version');
  const container = await docker.getContainer(live[0]!.containerId!).inspect();
  t.ok(container.Config.Env.includes('GREETING=two'), 'the new task has the new value');
  t.match(await fetchUntil(port, /greeting=two/), /greeting=two/, 'and serves it');

  // The same spec again still replaces the task (a redeploy is expected to restart).
  const third = await runner.deployService(web(name, port, 'two'));
  t.equal(third.forceUpdate, 2);
  t.not(running(await runner.serviceTasks(name, mine))[0]?.containerId, live[0]!.containerId, 'a new container');

  await runner.scaleService(name, 0, mine);
  t.equal(running(await runner.serviceTasks(name, mine)).length, 0, 'scaled to 0: nothing runs');
  t.ok(await refused(port), 'and the port is closed');
  t.equal((await docker.getService(name).inspect()).Spec.Mode.Replicated.Replicas, 0);

  await runner.scaleService(name, 1, mine);
  t.equal(running(await runner.serviceTasks(name, mine)).length, 1, 'scaled back to 1');
  t.match(await fetchUntil(port, /greeting=two/), /greeting=two/, 'answering again');

  const before = running(await runner.serviceTasks(name, mine))[0]!;
  await runner.restartService(name, mine);
  const after = running(await runner.serviceTasks(name, mine));
  t.equal(after.length, 1);
  t.equal(after[0]?.forceUpdate, before.forceUpdate + 1, 'restart raised ForceUpdate');
  t.not(after[0]?.containerId, before.containerId, 'restart replaced the container');
  t.match(await fetchUntil(port, /greeting=two/), /greeting=two/);

  // Service logs come through the swarm log broker, a moment behind.
  const logs = await waitFor(
    "the last task's start line in the service logs",
    async () => {
      const text = await runner.serviceLogs(name, mine);
      return /started with two/.test(text) && text;
    },
    { timeout: 60_000, interval: 200 },
  );
  t.match(logs, /started with one/, 'logs of every task, the first one too');
  t.match(logs, /started with two/);
  t.notMatch(logs, /[\x00-\x08]/, 'demultiplexed: no frame headers');
  const tail = await runner.serviceLogs(name, { ...mine, tail: 1 });
  t.ok(tail.trim().split('\n').length <= after.length + 4, 'tail limits the lines per task');
  const timestamped = await runner.serviceLogs(name, { ...mine, timestamps: true, since: '1h' });
  t.match(timestamped, /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/, 'timestamps on request');
  t.equal((await runner.serviceLogs(name, { ...mine, since: new Date(Date.now() + 3600_000) })).trim(), '', 'nothing since a future moment');

  t.equal(await runner.removeService(name, mine), true);
  t.equal(await runner.serviceExists(name, mine), false);
  t.same(await runner.serviceTasks(name, mine), []);
  const containers = await docker.listContainers({ all: true, filters: { label: [`com.docker.swarm.service.name=${name}`] } });
  t.equal(containers.length, 0, 'remove waits until the containers are gone');
  t.ok(await refused(port), 'the port is free again');
  t.equal(await runner.removeService(name, mine), false, 'removing an absent service is fine');
  const missing = await runner.serviceLogs(name, mine).catch(e => e);
  t.ok(missing instanceof BerthError);
  t.equal(missing.code, 'NOT_FOUND');
  const unscalable = await runner.scaleService(name, 1, mine).catch(e => e);
  t.equal(unscalable.code, 'NOT_FOUND');
  const unrestartable = await runner.restartService(name, mine).catch(e => e);
  t.equal(unrestartable.code, 'NOT_FOUND');
});

t.test('with a health check, a deploy is done when the new task is healthy, and updates start first', async t => {
  const name = uniqueName('healthy');
  cleanup(t, name);
  // The page appears two seconds after start: the health check fails until then.
  const workload = web(name, 0, 'checked', {
    ports: [],
    args: ['-c', 'mkdir -p /tmp/www; (sleep 2; echo "greeting=$GREETING" > /tmp/www/index.html) & exec httpd -f -p 8080 -h /tmp/www'],
    healthCheck: { Test: ['CMD', 'wget', '-q', '-O', '/dev/null', 'http://127.0.0.1:8080/'], Interval: 500_000_000, Timeout: 1_000_000_000, Retries: 10 },
  });
  await runner.deployService(workload);
  const [task] = running(await runner.serviceTasks(name, mine));
  const health = (await docker.getContainer(task!.containerId!).inspect()).State.Health?.Status;
  t.equal(health, 'healthy', 'running means healthy');
  const spec = await docker.getService(name).inspect();
  t.equal(spec.Spec.UpdateConfig.Order, 'start-first');

  await runner.deployService({ ...workload, env: { GREETING: 'again' } });
  const tasks = await runner.serviceTasks(name, mine);
  const [next] = running(tasks);
  t.equal(next?.forceUpdate, 1);
  t.equal((await docker.getContainer(next!.containerId!).inspect()).State.Health?.Status, 'healthy');
  // start-first: the old task was still running when the new one started.
  const old = tasks.find(x => x.forceUpdate === 0)!;
  t.ok(Date.parse(old.updatedAt) >= Date.parse(next!.createdAt), 'the old task stopped after the new one was created');
});

t.test('ingress publishing answers through the routing mesh', async t => {
  const name = uniqueName('ingress');
  const port = await freePort();
  cleanup(t, name);
  await runner.deployService(web(name, port, 'mesh', { ports: [{ targetPort: 8080, publishedPort: port, protocol: 'tcp', publishMode: 'ingress' }] }));
  const service = await docker.getService(name).inspect();
  t.same(service.Endpoint.Ports, [{ Protocol: 'tcp', TargetPort: 8080, PublishedPort: port, PublishMode: 'ingress' }], 'the engine publishes the port on the mesh');
  t.equal(running(await runner.serviceTasks(name, mine)).length, 1);
  // The routing mesh is IPVS: a kernel without it (some sandboxes) publishes the port but never answers.
  const noMesh = existsSync('/proc/net/ip_vs') ? undefined : 'this kernel has no IPVS (/proc/net/ip_vs), so the routing mesh cannot answer here';
  await t.test('and the mesh answers on it', async t => {
    if (!canRun(t, 'ipvs-routing-mesh', noMesh)) return;
    t.match(await fetchUntil(port, /greeting=mesh/), /greeting=mesh/);
  });
});

t.test("a missing image fails the deploy quickly with the engine's reason", async t => {
  const name = uniqueName('noimage');
  cleanup(t, name);
  const started = Date.now();
  const error = await runner.deployService(web(name, await freePort(), 'x', { image: 'berth-test/does-not-exist:1' })).catch(e => e);
  t.ok(error instanceof SwarmTaskError, 'a SwarmTaskError');
  t.match(error.message, /No such image: berth-test\/does-not-exist:1/);
  t.match(error.message, new RegExp(`^Service ${name}: the new version's task rejected`));
  t.equal(error.task?.state, 'rejected');
  t.ok(Date.now() - started < 60_000, `failed in ${Date.now() - started} ms, not hanging`);
});

t.test('a container that exits fails the deploy with its exit code', async t => {
  const name = uniqueName('exits');
  cleanup(t, name);
  const error = await runner.deployService(web(name, await freePort(), 'x', { args: ['-c', 'echo failing; exit 3'] })).catch(e => e);
  t.ok(error instanceof SwarmTaskError);
  t.match(error.message, /task failed: task: non-zero exit \(3\)/);
  t.equal(error.task?.exitCode, 3);
});

t.test("a failed update reports the new version's error while the old version keeps serving", async t => {
  const name = uniqueName('rollback');
  const port = await freePort();
  cleanup(t, name);
  await runner.deployService(web(name, port, 'stable'));
  t.match(await fetchUntil(port, /greeting=stable/), /greeting=stable/);
  const error = await runner.deployService(web(name, port, 'broken', { image: 'berth-test/does-not-exist:2' })).catch(e => e);
  t.ok(error instanceof SwarmTaskError);
  t.match(error.message, /No such image: berth-test\/does-not-exist:2/);
  // FailureAction rollback: Swarm goes back to the previous spec, which serves again.
  let state = '';
  await waitFor(
    'the rollback to complete',
    async () => {
      state = (await docker.getService(name).inspect()).UpdateStatus?.State ?? '';
      return state === 'rollback_completed';
    },
    { timeout: 60_000, interval: 500 },
  ).catch(() => undefined);
  // Swarm may report the rollback as started for a long while on a busy node (a replaced task
  // waits for the host port); that the previous version serves again is checked just below.
  t.match(state, /^rollback_(completed|started)$/, 'Swarm rolled the update back');
  // The rolled-back task starts like any other: give the node its time.
  let tasks = await runner.serviceTasks(name, mine);
  await waitFor(
    'a task of the rolled-back version to run',
    async () => {
      tasks = await runner.serviceTasks(name, mine);
      return running(tasks).length > 0;
    },
    { timeout: 90_000, interval: 500 },
  ).catch(() => undefined);
  t.same(
    running(tasks).map(x => x.forceUpdate),
    [0],
    `the first version runs again: ${JSON.stringify(tasks.map(x => [x.forceUpdate, x.state, x.error]))}`,
  );
  t.match(await fetchUntil(port, /greeting=stable/), /greeting=stable/, 'and serves');

  // The next deploy is judged by its own tasks, not by the rolled-back version's failures.
  const fixed = await runner.deployService(web(name, port, 'fixed'));
  t.ok(fixed.forceUpdate > 1, `a ForceUpdate no earlier task carried (${fixed.forceUpdate})`);
  t.match(await fetchUntil(port, /greeting=fixed/), /greeting=fixed/);
});

t.test("aborting stops the wait at once with the signal's reason", async t => {
  const name = uniqueName('abort');
  cleanup(t, name);
  const controller = new AbortController();
  // A constraint no node meets: the task stays pending for ever.
  const workload = web(name, await freePort(), 'x', { placement: { Constraints: ['node.labels.berth-test-nowhere==yes'] } });
  const lines: string[] = [];
  const pending = runner.deployService(workload, { signal: controller.signal, log: l => lines.push(l) });
  await waitFor('the deploy to wait on its pending task', () => lines.some(l => /0\/1 new task\(s\) running \(pending\)/.test(l)), { timeout: 60_000 });
  const reason = new Error('cancelled by the test');
  const at = Date.now();
  controller.abort(reason);
  const error = await pending.catch(e => e);
  t.equal(error, reason, 'rejects with the reason');
  t.ok(Date.now() - at < 15_000, `at once (${Date.now() - at} ms), not after the wait would have ended`);
  t.equal(await runner.serviceExists(name, mine), true, 'the service stays for the caller to decide');

  const already = await runner.deployService(workload, { signal: AbortSignal.abort(reason) }).catch(e => e);
  t.equal(already, reason, 'an aborted signal stops before any engine call');

  const timedOut = await runner.restartService(name, { ...mine, timeoutMs: 1000 }).catch(e => e);
  t.ok(timedOut instanceof SwarmTaskError);
  t.match(timedOut.message, /was not running after 1 s/);
});

t.test('registry credentials reach the engine and never the log', async t => {
  const name = uniqueName('auth');
  const port = await freePort();
  cleanup(t, name);
  const lines: string[] = [];
  const password = `pw-${randomBytes(8).toString('hex')}`;
  // Nothing can be pulled here: the engine tries with the credentials, then uses its local copy.
  await runner.deployService(web(name, port, 'private'), { log: l => lines.push(l), registryAuth: { username: 'berth', password, serveraddress: 'registry.invalid' } });
  t.match(await fetchUntil(port, /greeting=private/), /greeting=private/);
  t.notMatch(lines.join('\n'), new RegExp(password));
  t.notMatch(JSON.stringify(errors), new RegExp(password));
  const inspected = JSON.stringify(await docker.getService(name).inspect());
  t.notMatch(inspected, new RegExp(password), 'the engine does not show it either');
});

t.test('bad input is refused before the engine is asked', async t => {
  const bad = await runner.deployService(web('bad name', 30000, 'x')).catch(e => e);
  t.equal(bad.code, 'BAD_REQUEST');
  t.same(bad.issues[0].path, ['name']);
  for (const call of [
    () => runner.scaleService('bad name', 1, mine),
    () => runner.restartService('x;y', mine),
    () => runner.removeService('../x', mine),
    () => runner.serviceLogs('a b', mine),
    () => runner.serviceTasks('$(id)', mine),
    () => runner.serviceExists('a/b', mine),
  ]) {
    const e = await call().catch(e => e);
    t.equal(e?.code, 'BAD_REQUEST');
  }
  const negative = await runner.scaleService('berth-test-whatever', -1, mine).catch(e => e);
  t.same(negative.issues[0].path, ['replicas']);
  const tail = await runner.serviceLogs('berth-test-whatever', { ...mine, tail: -2 }).catch(e => e);
  t.same(tail.issues[0].path, ['tail']);
  const since = await runner.serviceLogs('berth-test-whatever', { ...mine, since: 'yesterday-ish' }).catch(e => e);
  t.same(since.issues[0].path, ['since']);
});

t.test('a spec the engine refuses is BAD_REQUEST with its reason', async t => {
  const name = uniqueName('refused');
  cleanup(t, name);
  const error = await runner.deployService(web(name, await freePort(), 'x', { restartPolicy: { Condition: 'sometimes' } })).catch(e => e);
  t.equal(error.code, 'BAD_REQUEST');
  t.match(error.message, new RegExp(`^Docker refused to create service ${name}: invalid RestartCondition: "sometimes"`));
  t.equal(await runner.serviceExists(name, mine), false);
});

t.test("a task the node cannot start fails with the engine's reason", async t => {
  const name = uniqueName('nomount');
  cleanup(t, name);
  const error = await runner.deployService(web(name, await freePort(), 'x', { mounts: [{ type: 'bind', source: '/berth-test-no-such-dir', target: '/data' }] })).catch(e => e);
  t.ok(error instanceof SwarmTaskError);
  t.match(error.message, /bind source path does not exist: \/berth-test-no-such-dir/);
});

t.test('a service deployed with 0 replicas is done at once and runs nothing', async t => {
  const name = uniqueName('zero');
  cleanup(t, name);
  const result = await runner.deployService(web(name, await freePort(), 'zero', { replicas: 0 }));
  t.equal(result.created, true);
  t.same(running(result.tasks), []);
  t.equal(await runner.serviceExists(name, mine), true);
  t.same(await runner.serviceTasks(name, mine), []);
});

t.test('a global service runs one task per node and cannot be scaled', async t => {
  const name = uniqueName('global');
  cleanup(t, name);
  const result = await runner.deployService(web(name, 0, 'everywhere', { ports: [], mode: { Global: {} } }));
  t.equal(running(result.tasks).length, 1, 'one node, one task');
  t.equal(running(result.tasks)[0]?.slot, null, 'global tasks have no slot');
  const error = await runner.scaleService(name, 3, mine).catch(e => e);
  t.equal(error.code, 'BAD_REQUEST');
  t.match(error.message, /does not run in replicated mode/);
  await runner.restartService(name, mine);
  t.equal(running(await runner.serviceTasks(name, mine))[0]?.forceUpdate, 1, 'restart works in global mode');
});

t.test('the free functions take the engine client', async t => {
  const name = uniqueName('free');
  const port = await freePort();
  t.teardown(() => runner.removeService(name, mine));
  await deployService(docker, web(name, port, 'free'));
  t.equal(await serviceExists(docker, name, mine), true);
  t.match(await fetchUntil(port, /greeting=free/), /greeting=free/);
  const logs = await waitFor(
    'the start line in the service logs',
    async () => {
      const text = await serviceLogs(docker, name, { ...mine, since: '10m' });
      return /started with free/.test(text) && text;
    },
    { timeout: 60_000, interval: 200 },
  );
  t.match(logs, /started with free/);
  const missing = await serviceLogs(docker, uniqueName('none'), mine).catch(e => e);
  t.equal(missing.code, 'NOT_FOUND', 'engine errors become domain errors without a ContainerHosts too');
});

t.test("a service of the name that is not the owner's is refused and left alone", async t => {
  const name = uniqueName('theirs');
  const port = await freePort();
  cleanup(t, name);
  await runner.deployService(web(name, port, 'theirs', { ownerLabels: { 'berth.id': 'someone-else' } }));
  const before = await docker.getService(name).inspect();
  const notOurs = /a service named .* exists on this host and is not Berth's for this record/;
  for (const [what, call] of [
    ['deploy', () => runner.deployService(web(name, port, 'mine'))],
    ['scale', () => runner.scaleService(name, 0, mine)],
    ['restart', () => runner.restartService(name, mine)],
    ['logs', () => runner.serviceLogs(name, mine)],
    ['tasks', () => runner.serviceTasks(name, mine)],
    ['exists', () => runner.serviceExists(name, mine)],
    ['remove', () => runner.removeService(name, mine)],
  ] as const) {
    const error = await (call as () => Promise<unknown>)().then(
      () => null,
      (e: BerthError) => e,
    );
    t.equal(error?.code, 'CONFLICT', what);
    t.match(error?.message, notOurs, what);
  }
  const after = await docker.getService(name).inspect();
  t.equal(after.Version.Index, before.Version.Index, 'never updated');
  t.equal(running(await runner.serviceTasks(name, { owner: 'someone-else' })).length, 1, 'still running for its owner');
  t.equal(await runner.removeService(name, { owner: 'someone-else' }), true, 'its owner may remove it');
});
