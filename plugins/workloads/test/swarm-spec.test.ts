// Resource units and the WorkloadService → ServiceSpec mapping (pure, no engine).
import t from 'tap';
import { parseCpu, parseMemory } from '../src/swarm/resources.ts';
import { toServiceSpec, updateOrder } from '../src/swarm/service-spec.ts';
import { refusals } from './refusals.ts';
import type { WorkloadService } from '../src/services.ts';

t.test('parseMemory reads bytes and Docker sizes', async t => {
  const MiB = 1024 ** 2;
  t.equal(parseMemory('512m'), 512 * MiB);
  t.equal(parseMemory('512M'), 512 * MiB);
  t.equal(parseMemory('512mb'), 512 * MiB);
  t.equal(parseMemory('1g'), 1024 * MiB);
  t.equal(parseMemory('1.5G'), 1536 * MiB);
  t.equal(parseMemory('2GiB'), 2048 * MiB);
  t.equal(parseMemory('1gi'), 1024 * MiB);
  t.equal(parseMemory('100k'), 102400);
  t.equal(parseMemory('268435456'), 268435456);
  t.equal(parseMemory(268435456), 268435456);
  t.equal(parseMemory(' 64 m '), 64 * MiB);
  t.equal(parseMemory('1t'), 1024 ** 4);
  t.equal(parseMemory(null), null);
  t.equal(parseMemory(undefined), null);
  t.equal(parseMemory(''), null);
  t.equal(parseMemory('0'), null, 'zero is no limit');
  refusals(t, 'bad sizes are refused as a domain error naming the field, with the message', [
    [() => parseMemory('lots'), ['memory'], /^Invalid memory "lots": use bytes/],
    [() => parseMemory('-1g', 'memoryLimit'), ['memoryLimit'], /^Invalid memoryLimit "-1g"/],
    [() => parseMemory('12x', 'memoryReservation'), ['memoryReservation'], /memoryReservation/],
    [() => parseMemory('1g; rm -rf /'), ['memory'], /Invalid memory/],
    [() => parseMemory(-5), ['memory'], /Invalid memory "-5"/],
    [() => parseMemory(Number.NaN), ['memory'], /Invalid memory/],
    [() => parseMemory('99999999999t'), ['memory'], /Invalid memory/],
  ]);
});

t.test('parseCpu answers NanoCPUs', async t => {
  t.equal(parseCpu('0.5'), 500_000_000);
  t.equal(parseCpu('2'), 2_000_000_000);
  t.equal(parseCpu(1.25), 1_250_000_000);
  t.equal(parseCpu('.25'), 250_000_000);
  t.equal(parseCpu('2000000000'), 2_000_000_000, "the peer's NanoCPUs pass through");
  t.equal(parseCpu(500000000), 500_000_000);
  t.equal(parseCpu(null), null);
  t.equal(parseCpu(''), null);
  t.equal(parseCpu('0'), null, 'zero is no limit');
  refusals(t, 'bad CPU amounts are refused as a domain error naming the field, with the message', [
    [() => parseCpu('half'), ['cpu'], /^Invalid cpu "half": use a number of CPUs/],
    [() => parseCpu('-1', 'cpuLimit'), ['cpuLimit'], /^Invalid cpuLimit "-1"/],
    [() => parseCpu('1e3', 'cpuReservation'), ['cpuReservation'], /cpuReservation/],
    [() => parseCpu(Number.POSITIVE_INFINITY), ['cpu'], /Invalid cpu/],
    [() => parseCpu('0.0000000001'), ['cpu'], /Invalid cpu/],
  ]);
});

const workload = (over: Partial<WorkloadService> = {}): WorkloadService => ({
  name: 'shop-api-a1b2c3',
  image: 'registry.example.com:5000/team/api:1.2',
  env: { PORT: '8080', GREETING: 'hello world' },
  mounts: [],
  ports: [],
  replicas: 2,
  ownerLabels: { 'berth.kind': 'application', 'berth.id': 'app_1' },
  ...over,
});
const NET = 'berth-network';

t.test('a minimal workload maps to a replicated service on the platform network', async t => {
  const spec = toServiceSpec(workload(), { platformNetwork: NET });
  t.same(spec, {
    Name: 'shop-api-a1b2c3',
    Labels: { 'berth.kind': 'application', 'berth.id': 'app_1' },
    TaskTemplate: {
      ContainerSpec: { Image: 'registry.example.com:5000/team/api:1.2', Env: ['PORT=8080', 'GREETING=hello world'], Labels: { 'berth.kind': 'application', 'berth.id': 'app_1' } },
      Networks: [{ Target: NET }],
      ForceUpdate: 0,
    },
    Mode: { Replicated: { Replicas: 2 } },
    UpdateConfig: { Parallelism: 1, Order: 'start-first', FailureAction: 'rollback' },
    EndpointSpec: { Mode: 'vip' },
  });
});

t.test('every field reaches its place in the spec', async t => {
  const healthCheck = { Test: ['CMD', 'wget', '-q', '-O-', 'http://127.0.0.1:8080/'], Interval: 1e9, Timeout: 1e9, Retries: 3 };
  const spec = toServiceSpec(
    workload({
      command: '  /bin/server   --listen 0.0.0.0 ',
      args: ['--name', 'two words'],
      mounts: [
        { type: 'volume', source: 'shop-data', target: '/data' },
        { type: 'bind', source: '/srv/berth/files/shop', target: '/etc/shop', readOnly: true },
      ],
      ports: [
        { targetPort: 8080, publishedPort: 30080, protocol: 'tcp', publishMode: 'ingress' },
        { targetPort: 53, publishedPort: 30053, protocol: 'udp', publishMode: 'ingress' },
      ],
      memoryLimit: 536870912,
      memoryReservation: 268435456,
      cpuLimit: 2_000_000_000,
      cpuReservation: 500_000_000,
      healthCheck,
      restartPolicy: { Condition: 'on-failure', MaxAttempts: 3 },
      placement: { Constraints: ['node.role==manager'] },
      rollbackConfig: { Parallelism: 1, Order: 'stop-first' },
      labels: { team: 'shop', 'berth.kind': 'spoofed' },
      networks: [{ Target: 'shop-internal', Aliases: ['api'] }, { Target: NET }],
      stopGracePeriod: 20_000_000_000,
    }),
    { platformNetwork: NET, forceUpdate: 7, init: true },
  );
  const task = spec.TaskTemplate as Record<string, any>;
  t.same(task.ContainerSpec.Command, ['/bin/server', '--listen', '0.0.0.0'], 'command split into an argument array');
  t.same(task.ContainerSpec.Args, ['--name', 'two words'], 'args as given');
  t.same(task.ContainerSpec.Mounts, [
    { Type: 'volume', Source: 'shop-data', Target: '/data', ReadOnly: false },
    { Type: 'bind', Source: '/srv/berth/files/shop', Target: '/etc/shop', ReadOnly: true },
  ]);
  t.equal(task.ContainerSpec.StopGracePeriod, 20_000_000_000, 'nanoseconds, as the API stores them');
  t.same(task.ContainerSpec.HealthCheck, healthCheck);
  t.equal(task.ContainerSpec.Init, true);
  t.same(task.Resources, { Limits: { MemoryBytes: 536870912, NanoCPUs: 2_000_000_000 }, Reservations: { MemoryBytes: 268435456, NanoCPUs: 500_000_000 } });
  t.same(task.RestartPolicy, { Condition: 'on-failure', MaxAttempts: 3 });
  t.same(task.Placement, { Constraints: ['node.role==manager'] });
  t.same(task.Networks, [{ Target: NET }, { Target: 'shop-internal', Aliases: ['api'] }], 'platform network once, first');
  t.equal(task.ForceUpdate, 7);
  t.same(spec.Labels, { team: 'shop', 'berth.kind': 'application', 'berth.id': 'app_1' }, 'owner labels win');
  t.same(spec.EndpointSpec, {
    Mode: 'vip',
    Ports: [
      { Protocol: 'tcp', TargetPort: 8080, PublishedPort: 30080, PublishMode: 'ingress' },
      { Protocol: 'udp', TargetPort: 53, PublishedPort: 30053, PublishMode: 'ingress' },
    ],
  });
  t.same(spec.UpdateConfig, { Parallelism: 1, Order: 'start-first', FailureAction: 'rollback' }, 'start-first by default');
  t.same(spec.RollbackConfig, { Parallelism: 1, Order: 'stop-first' });
});

t.test('update order: start-first unless a host port or a single writer forbids it; explicit settings win; the log says why', async t => {
  const order = (over: Partial<WorkloadService>) => (toServiceSpec(workload(over), { platformNetwork: NET }).UpdateConfig as { Order: string }).Order;
  const healthCheck = { Test: ['CMD', 'true'] };
  const hostPort = { targetPort: 80, publishedPort: 8080, protocol: 'tcp', publishMode: 'host' } as const;
  t.equal(order({}), 'start-first', 'no health check: the proxy retries a task not listening yet (issue 51)');
  t.equal(order({ healthCheck }), 'start-first');
  t.equal(order({ ports: [{ ...hostPort, publishMode: 'ingress' }] }), 'start-first', 'an ingress port is held by no task');
  t.equal(order({ healthCheck, ports: [hostPort] }), 'stop-first', 'a host port cannot be held twice');
  t.equal(order({ placement: { MaxReplicas: 1 } }), 'stop-first', 'a node full of its tasks has no room for a new one beside the old');
  t.equal(order({ healthCheck, defaultUpdateOrder: 'stop-first' }), 'stop-first', 'a database keeps one writer');
  t.equal(order({ defaultUpdateOrder: 'start-first' }), 'start-first');
  const explicit = { Parallelism: 2, Order: 'stop-first', Delay: 1e9 };
  t.same(toServiceSpec(workload({ healthCheck, updateConfig: explicit }), { platformNetwork: NET }).UpdateConfig, explicit);

  const why = (over: Partial<WorkloadService>) => updateOrder(workload(over));
  t.match(why({ ports: [hostPort] }), { order: 'stop-first', reason: /^forced: port 8080\/tcp is published in host mode, which one task per node can hold/ });
  t.match(why({}), { order: 'start-first', reason: 'the new task starts beside the old one, which stops once the new one runs' });
  t.match(why({ mounts: [{ type: 'volume', source: 'uploads', target: '/data' }] }), {
    reason: /both mount volume uploads meanwhile \(an application that must hold it alone sets updateConfigSwarm.Order stop-first\)/,
  });
  t.match(why({ updateConfig: explicit }), { order: 'stop-first', reason: /updateConfigSwarm/ });
});

t.test('mode, detached network and empty values', async t => {
  const global = toServiceSpec(workload({ mode: { Global: {} } }), { platformNetwork: NET });
  t.same(global.Mode, { Global: {} });
  const replicated = toServiceSpec(workload({ mode: { Replicated: {} }, replicas: 3 }), { platformNetwork: NET });
  t.same(replicated.Mode, { Replicated: { Replicas: 3 } }, 'replicas fill a mode without a count');
  const zero = toServiceSpec(workload({ replicas: 0 }), { platformNetwork: NET });
  t.same(zero.Mode, { Replicated: { Replicas: 0 } });
  const detached = toServiceSpec(workload({ detachPlatformNetwork: true, networks: [{ Target: 'own' }] }), { platformNetwork: NET });
  t.same((detached.TaskTemplate as Record<string, unknown>).Networks, [{ Target: 'own' }]);
  const alone = toServiceSpec(workload({ detachPlatformNetwork: true, command: '  ', args: [], memoryLimit: null, cpuLimit: null }), { platformNetwork: NET });
  const task = alone.TaskTemplate as Record<string, any>;
  t.notOk('Networks' in task, 'no networks at all');
  t.notOk('Command' in task.ContainerSpec, 'a blank command keeps the image entrypoint');
  t.notOk('Args' in task.ContainerSpec);
  t.notOk('Resources' in task, 'no limits, no resources object');
});

t.test('names that reach the host are checked, naming the field', async t => {
  const spec = (over: Partial<WorkloadService>) => toServiceSpec(workload(over), { platformNetwork: NET });
  refusals(t, 'each bad value is refused as a domain error naming its field, with the message', [
    [() => spec({ name: 'bad name' }), ['name'], /^Invalid name "bad name"/],
    [() => spec({ name: '-leading' }), ['name'], /Invalid name/],
    [() => spec({ name: 'a'.repeat(64) }), ['name'], /at most 63/],
    [() => spec({ name: 'dots.not.allowed' }), ['name'], /Invalid name/],
    [() => spec({ name: '' }), ['name'], /Invalid name/],
    [() => spec({ image: 'nginx;rm -rf /' }), ['image'], /^Invalid image "nginx;rm -rf \/"/],
    [() => spec({ image: 'UPPER/case' }), ['image'], /Invalid image/],
    [() => spec({ image: '$(id)' }), ['image'], /Invalid image/],
    [() => spec({ image: '' }), ['image'], /Invalid image/],
    [() => spec({ env: { 'BAD-KEY': 'x' } }), ['env', 'BAD-KEY'], /"BAD-KEY"/],
    [() => spec({ mounts: [{ type: 'volume', source: 'data', target: 'relative/path' }] }), ['mounts', 0, 'target'], /^Invalid mount target "relative\/path": use an absolute path/],
    [
      () =>
        spec({
          mounts: [
            { type: 'volume', source: 'data', target: '/ok' },
            { type: 'volume', source: 'data', target: '/a/../etc' },
          ],
        }),
      ['mounts', 1, 'target'],
      /Invalid mount target/,
    ],
    [() => spec({ mounts: [{ type: 'volume', source: '../escape', target: '/data' }] }), ['mounts', 0, 'source'], /^Invalid volume name "..\/escape"/],
    [() => spec({ mounts: [{ type: 'volume', source: 'a b', target: '/data' }] }), ['mounts', 0, 'source'], /Invalid volume name/],
    [() => spec({ mounts: [{ type: 'bind', source: 'relative', target: '/data' }] }), ['mounts', 0, 'source'], /^Invalid bind mount source "relative"/],
    [() => spec({ mounts: [{ type: 'tmpfs' as 'bind', source: '/x', target: '/data' }] }), ['mounts', 0, 'type'], /Invalid mount type/],
    [() => spec({ ports: [{ targetPort: 0, publishedPort: 80, protocol: 'tcp', publishMode: 'ingress' }] }), ['ports', 0, 'targetPort'], /Invalid target port 0/],
    [() => spec({ ports: [{ targetPort: 80, publishedPort: 70000, protocol: 'tcp', publishMode: 'ingress' }] }), ['ports', 0, 'publishedPort'], /Invalid published port 70000/],
    [() => spec({ ports: [{ targetPort: 80, publishedPort: 80, protocol: 'sctp' as 'tcp', publishMode: 'ingress' }] }), ['ports', 0, 'protocol'], /Invalid protocol/],
    [() => spec({ ports: [{ targetPort: 80, publishedPort: 80, protocol: 'tcp', publishMode: 'dnsrr' as 'host' }] }), ['ports', 0, 'publishMode'], /Invalid publish mode/],
    [
      () =>
        spec({
          ports: [
            { targetPort: 80, publishedPort: 8080, protocol: 'tcp', publishMode: 'ingress' },
            { targetPort: 81, publishedPort: 8080, protocol: 'tcp', publishMode: 'ingress' },
          ],
        }),
      ['ports', 1, 'publishedPort'],
      /8080\/tcp is used twice/,
    ],
    [() => spec({ networks: [{ Target: 'net;evil' }] }), ['networks', 0, 'Target'], /Invalid network/],
    [() => spec({ placement: { Constraints: ['node.role==manager', 'nonsense'] } }), ['placement', 'Constraints', 1], /^Invalid placement constraint "nonsense"/],
    [() => spec({ placement: { Constraints: ['node.role===x'] } }), ['placement', 'Constraints', 0], /Invalid placement constraint/],
    [() => spec({ replicas: -1 }), ['replicas'], /Invalid replicas -1/],
    [() => spec({ replicas: 1.5 }), ['replicas'], /Invalid replicas/],
    [() => spec({ memoryLimit: -1 }), ['memoryLimit'], /Invalid memoryLimit/],
    [() => spec({ cpuLimit: 0.5 }), ['cpuLimit'], /Invalid cpuLimit 0.5/],
    [() => spec({ stopGracePeriod: 1.5 }), ['stopGracePeriod'], /Invalid stopGracePeriod/],
    [() => spec({ updateConfig: { Parallelism: 1, Order: 'random' } }), ['updateConfig', 'Order'], /start-first or stop-first/],
  ]);
  t.doesNotThrow(() => spec({ placement: { Constraints: ['node.role == manager', 'node.labels.region!=eu-west', 'engine.labels.disk==ssd'] } }), 'valid placement constraints pass');
  const images = ['nginx', 'nginx:1.27-alpine', 'library/nginx', 'ghcr.io/owner/app:v1.2.3', 'localhost:5000/a/b/c:tag', `app@sha256:${'a'.repeat(64)}`, 'berth-test/busybox:1'];
  const refusedImages = images.flatMap(image => {
    try {
      spec({ image });
      return [];
    } catch (e) {
      return [`${image}: ${(e as Error).message}`];
    }
  });
  t.same(refusedImages, [], 'valid references of every shape pass');
});

t.test("placement by ownership: the organization's constraint is always there, the user's are kept and can only narrow", async t => {
  const ORG = 'Org_a-1';
  const ours = 'node.labels.berth.org.Org_a-1==true';
  const owned = (placement?: WorkloadService['placement']) =>
    workload({ ownerLabels: { 'berth.kind': 'application', 'berth.id': 'app_1', 'berth.organization': ORG }, ...(placement === undefined ? {} : { placement }) });
  const placementOf = (w: WorkloadService) => (toServiceSpec(w, { platformNetwork: NET }).TaskTemplate as Record<string, any>).Placement;
  t.same(placementOf(owned()), { Constraints: [ours] }, 'no placement of its own: the organization constraint alone');
  t.same(placementOf(owned(null)), { Constraints: [ours] });
  const users = ['node.role == manager', 'node.labels.region!=eu-west'];
  const w = owned({ Constraints: users, Preferences: [{ Spread: { SpreadDescriptor: 'node.labels.zone' } }] });
  t.same(placementOf(w), { Constraints: [ours, ...users], Preferences: [{ Spread: { SpreadDescriptor: 'node.labels.zone' } }] }, "the user's constraints as written, after the organization's");
  t.same(w.placement!.Constraints, users, "the record's own constraints are not changed");
  // Constraints are ANDed: naming another organization's label, or repeating ours, cannot drop ours.
  const widen = owned({ Constraints: ['node.labels.berth.org.other==true', 'node.labels.berth.org.Org_a-1 == true'] });
  t.same(placementOf(widen).Constraints, [ours, 'node.labels.berth.org.other==true'], "another organization's label only narrows; a repeat of ours is not added twice");
  const negate = owned({ Constraints: ['node.labels.berth.org.Org_a-1!=true'] });
  t.same(placementOf(negate).Constraints, [ours, 'node.labels.berth.org.Org_a-1!=true'], 'a negation of ours is ANDed with it (no node), never replaces it');
  t.same(placementOf(workload({ placement: { Constraints: ['node.role==worker'] } })), { Constraints: ['node.role==worker'] }, 'a service of no organization (no owner label) keeps its own placement');
});
