// network.* through the real kernel, a real PostgreSQL and the real Docker engine: a network is made
// with Berth's labels for its record and organization, inspected, made again when it is gone,
// removed (not while a service uses it); a network Berth made for the organization and no record
// names is imported back, while one Berth did not make, or made for another organization, is never
// imported, inspected or removed; another organization's records answer 404. A workload of the
// organization joins its network by name, and another organization's is refused at deploy. On a
// kit host (its own sshd and dockerd), a record naming the server is made there and never on this
// machine's engine. Every network made here is removed at the end.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import Docker from 'dockerode';
import { newId } from '@berth/core';
import { canRun, Client, otherOrganization, runFinished, signUpAdmin, startTestServer, TEST_BASE_IMAGE, waitFor, type Reply } from '@berth/core/testing';
import { remoteHostsMissing, sharedRemoteHosts } from '@berth/test/remote-hosts';

t.setTimeout(600_000);

const docker = new Docker();
/** Every name made here starts with it: the teardown removes what a failed test left. */
const PREFIX = `bnt-${process.pid}-${randomBytes(3).toString('hex')}`;
let made = 0;
const name = (what: string) => `${PREFIX}-${what}-${++made}`;

interface EngineNetwork {
  Id: string;
  Name: string;
  Driver: string;
  Scope: string;
  Internal: boolean;
  Attachable: boolean;
  Labels: Record<string, string> | null;
  IPAM: { Config: { Subnet?: string; Gateway?: string; IPRange?: string }[] | null };
}
const onEngine = (engine: Docker, n: string) =>
  (engine.getNetwork(n).inspect() as Promise<EngineNetwork>).then(
    found => (found.Name === n ? found : null),
    () => null,
  );
const removeFromEngine = (engine: Docker, n: string) =>
  engine
    .getNetwork(n)
    .remove()
    .catch(() => undefined);
const ok = (r: Reply, what: string) => {
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
const issuePaths = (r: Reply) => ((r.body?.issues ?? []) as { path: (string | number)[] }[]).map(i => i.path.join('.'));

t.teardown(async () => {
  const left = (await docker.listNetworks({ filters: { name: [PREFIX] } })) as { Name: string; Id: string }[];
  for (const n of left.filter(n => n.Name.startsWith(PREFIX))) await removeFromEngine(docker, n.Id);
});

const server = await startTestServer({ proxy: 'none', deploySettleSeconds: 1 });
t.teardown(() => server.destroy());
const admin = await signUpAdmin(server);
const a = admin.client;
// B: another account's organization, not the instance operators'.
const strangerKey = await a.post('user.createUserWithCredentials', { email: 'stranger@example.com', password: 'stranger-password-1', role: 'member' });
const stranger = ok(strangerKey, 'user.createUserWithCredentials') as { userId: string };
const other = await otherOrganization(server, stranger.userId);
const b = other.client;
ok(await a.post('user.remove', { userId: stranger.userId }), 'user.remove');

t.test('create: the network is on the engine with the labels of its record and organization; inspect answers it', async t => {
  const n = name('made');
  const created = await a.post('network.create', { name: n });
  t.equal(created.status, 200, JSON.stringify(created.body));
  t.match(created.body, {
    name: n,
    driver: 'bridge',
    internal: false,
    attachable: false,
    enableIPv4: true,
    enableIPv6: false,
    mtu: null,
    ipam: {},
    organizationId: admin.organizationId,
    serverId: null,
  });
  const { networkId } = created.body as { networkId: string };
  t.match(created.body.createdAt, /^\d{4}-\d\d-\d\dT/);
  const found = await onEngine(docker, n);
  t.ok(found, 'the engine has it');
  t.same(found?.Labels, { 'berth.kind': 'network', 'berth.id': networkId, 'berth.organization': admin.organizationId }, "Berth's labels: kind, record, organization");
  t.equal(found?.Driver, 'bridge');

  const inspected = await a.get('network.inspect', { networkId });
  t.equal(inspected.status, 200);
  t.equal(inspected.body.Id, found?.Id, "inspect is the engine's answer for that network");
  t.same(inspected.body.Labels, found?.Labels);
  t.same((await a.get('network.one', { networkId })).body, created.body, 'one answers the record');
  t.same(
    ((await a.get('network.all')).body as { networkId: string }[]).map(x => x.networkId),
    [networkId],
    "all lists this machine's networks of the organization",
  );

  t.test('recreate: nothing changes while the network is there; made again, labelled, once it is gone', async t => {
    t.same((await a.post('network.recreate', { networkId })).body, created.body, 'answers the record');
    t.equal((await onEngine(docker, n))?.Id, found?.Id, 'the same network: nothing was made');
    await removeFromEngine(docker, n);
    const sync = await a.get('network.networksToSync');
    t.same(sync.body.missing, [{ networkId, name: n }], 'networksToSync: the record is missing its network');
    const gone = await a.get('network.inspect', { networkId });
    t.equal(gone.status, 404, 'inspect: 404 while it is gone');
    t.match(gone.body.message, /network\.recreate makes it again/);
    t.equal((await a.post('network.recreate', { networkId })).status, 200);
    const again = await onEngine(docker, n);
    t.ok(again && again.Id !== found?.Id, 'a new network of that name');
    t.same(again?.Labels, found?.Labels, 'with the same labels');
    t.same((await a.get('network.networksToSync')).body.missing, [], 'nothing missing any more');
    t.equal((await a.get('network.inspect', { networkId })).body.Id, again?.Id);
  });

  t.test('remove: the network and the record go', async t => {
    const removed = await a.post('network.remove', { networkId });
    t.equal(removed.status, 200);
    t.same(removed.body, created.body, 'answers the record as it was');
    t.equal(await onEngine(docker, n), null, 'gone from the engine');
    t.equal((await a.get('network.one', { networkId })).status, 404, 'and the record');
  });
});

t.test('create refuses names that are not a user network’s, taken names and ranges that cannot be', async t => {
  const refused = async (input: Record<string, unknown>, status: number, field?: string, message?: RegExp) => {
    const r = await a.post('network.create', input);
    t.equal(r.status, status, `${JSON.stringify(input)} → ${status} (${JSON.stringify(r.body).slice(0, 200)})`);
    if (field) t.ok(issuePaths(r).includes(field) || (r.body.message as string).startsWith(`${field}:`), `names ${field}`);
    if (message) t.match(r.body.message + JSON.stringify(r.body.issues ?? []), message);
    return r;
  };
  for (const reserved of ['bridge', 'host', 'none', 'ingress', 'docker_gwbridge', 'berth-org-0123456789ab']) await refused({ name: reserved }, 400, 'name');
  const platform = server.kernel.container.cradle.hosts.platformNetwork;
  await refused({ name: platform }, 400, 'name', /platform network/);
  for (const bad of ['-lead', 'has space', 'a/b', 'x'.repeat(64), '']) await refused({ name: bad }, 400, 'name');

  // A taken name: a record's, and a network Berth did not make.
  const foreign = name('foreign');
  await docker.createNetwork({ Name: foreign, Driver: 'bridge' });
  await refused({ name: foreign }, 409, undefined, new RegExp(`a network named ${foreign} already exists on this host`));
  const twice = name('twice');
  t.equal((await a.post('network.create', { name: twice })).status, 200);
  await refused({ name: twice }, 409, undefined, /already exists on this host/);
  t.equal((await b.post('network.create', { name: twice })).status, 409, "another organization's record holds the name on this machine too");

  await refused({ name: name('v4v6'), enableIPv4: false, enableIPv6: false }, 400, 'enableIPv4', /IPv4 or IPv6 must be enabled/);
  const api = Number((await docker.version()).ApiVersion);
  if (api < 1.47) await refused({ name: name('v6only'), enableIPv4: false, enableIPv6: true }, 400, 'enableIPv4', /cannot turn IPv4 off/);
  await refused({ name: name('nosub'), ipam: { config: [{ gateway: '198.19.0.1' }] } }, 400, 'ipam.config.0.subnet', /needs a subnet/);
  await refused({ name: name('bits'), ipam: { config: [{ subnet: '198.19.0.5/24' }] } }, 400, 'ipam.config.0.subnet', /host bits set: the block starts at 198\.19\.0\.0\/24/);
  await refused({ name: name('notcidr'), ipam: { config: [{ subnet: 'ten/8' }] } }, 400, 'ipam.config.0.subnet', /not an IP address/);
  await refused({ name: name('gw'), ipam: { config: [{ subnet: '198.19.0.0/24', gateway: '198.19.1.1' }] } }, 400, 'ipam.config.0.gateway', /not inside the subnet/);
  await refused({ name: name('range'), ipam: { config: [{ subnet: '198.19.0.0/24', ipRange: '198.19.0.0/16' }] } }, 400, 'ipam.config.0.ipRange', /not inside the subnet/);
  await refused({ name: name('v6'), ipam: { config: [{ subnet: 'fd00:231::/64' }] } }, 400, 'ipam.config.0.subnet', /needs enableIPv6/);
  await refused({ name: name('mtu'), mtu: 12 }, 400, 'mtu');
  await refused({ name: name('driver'), driver: 'macvlan' }, 400, 'driver');
  await refused({ name: name('server'), serverId: 'no-such-server' }, 404, undefined, /Server no-such-server not found/);
  t.same(
    ((await a.get('network.all')).body as { name: string }[]).map(x => x.name),
    [twice],
    'no record was kept for a refused create',
  );
});

t.test("addresses on this machine: the instance operators choose them; another organization's create is refused (403)", async t => {
  // The benchmarking range (RFC 2544), which nothing here routes: a /24 of this run's pid in 198.18.0.0/16.
  const subnet = `198.18.${process.pid % 250}.0/24`;
  const gateway = subnet.replace(/0\/24$/, '1');
  const ipRange = subnet.replace(/0\/24$/, '128/25');
  const n = name('addressed');
  const made = await a.post('network.create', { name: n, driver: 'overlay', attachable: true, internal: true, mtu: 1400, ipam: { driver: 'default', config: [{ subnet, gateway, ipRange }] } });
  t.equal(made.status, 200, JSON.stringify(made.body));
  t.match(made.body, { driver: 'overlay', attachable: true, internal: true, mtu: 1400, ipam: { driver: 'default', config: [{ subnet, gateway, ipRange }] } });
  // The swarm's allocator fills the driver and the addresses in a moment after the create (under load, after the first inspect).
  const found = await waitFor('the overlay network allocated', async () => {
    const inspected = await onEngine(docker, n);
    return inspected?.Driver ? inspected : undefined;
  });
  t.match(found, { Driver: 'overlay', Scope: 'swarm', Attachable: true, Internal: true, IPAM: { Config: [{ Subnet: subnet, Gateway: gateway, IPRange: ipRange }] } }, 'the engine made it as asked');
  const overlap = await a.post('network.create', { name: name('overlap'), ipam: { config: [{ subnet: subnet.replace(/\/24$/, '/25') }] } });
  t.equal(overlap.status, 409, 'a subnet overlapping one the host uses: 409');
  t.match(overlap.body.message, /ipam\.config\.0\.subnet: overlaps an address range a network on this host already uses/);

  const tenant = await b.post('network.create', { name: name('tenant-addressed'), ipam: { config: [{ subnet: '198.19.2.0/24' }] } });
  t.equal(tenant.status, 403, "another organization's chosen subnet on this machine");
  t.match(tenant.body.message, /^ipam\.config: on Berth's own machine only its instance operators choose/);
  t.equal((await b.post('network.create', { name: name('tenant-driver'), ipam: { driver: 'null' } })).status, 403, 'and its IPAM driver');
  const plain = await b.post('network.create', { name: name('tenant-plain') });
  t.equal(plain.status, 200, 'a network without chosen addresses is fine');
  t.equal((await b.post('network.create', { name: name('tenant-default'), ipam: { driver: 'default', config: [] } })).status, 200, 'so is the default IPAM driver with no range');
  t.same(
    (await onEngine(docker, plain.body.name))?.Labels,
    { 'berth.kind': 'network', 'berth.id': plain.body.networkId, 'berth.organization': other.organizationId },
    "labelled with B's organization",
  );
});

t.test('import takes back only networks Berth made for this organization; sync lists only those', async t => {
  // As Berth labels one, with a record id no record has: a record lost with a database restore.
  const lostId = newId();
  const lost = name('lost');
  await docker.createNetwork({ Name: lost, Driver: 'bridge', Labels: { 'berth.kind': 'network', 'berth.id': lostId, 'berth.organization': admin.organizationId } });
  const plain = name('plain');
  await docker.createNetwork({ Name: plain, Driver: 'bridge', Labels: { keep: 'me' } });
  const theirs = name('theirs');
  await docker.createNetwork({ Name: theirs, Driver: 'bridge', Labels: { 'berth.kind': 'network', 'berth.id': newId(), 'berth.organization': other.organizationId } });

  const sync = await a.get('network.networksToSync');
  t.equal(sync.status, 200);
  const importable = (sync.body.importable as { name: string }[]).map(x => x.name);
  t.ok(importable.includes(lost), "this organization's unrecorded network is importable");
  t.notOk(importable.includes(plain), 'a network Berth did not make is not listed');
  t.notOk(importable.includes(theirs), "nor another organization's");
  t.match(
    (sync.body.importable as { name: string }[]).find(x => x.name === lost),
    { name: lost, driver: 'bridge', internal: false, attachable: false, subnets: [/\//] },
  );
  t.notOk(
    ((await b.get('network.networksToSync')).body.importable as { name: string }[]).some(x => x.name === lost),
    "B's sync does not list A's",
  );

  const result = await a.post('network.import', { names: [lost, plain, theirs, name('nowhere')] });
  t.equal(result.status, 200);
  t.same(result.body.imported, [lost], 'only the network Berth made for this organization');
  const errors = result.body.errors as { name: string; error: string }[];
  t.same(
    errors.map(e => e.name),
    [plain, theirs, errors[2]!.name],
  );
  t.equal(new Set(errors.map(e => e.error)).size, 1, "a foreign network, another organization's and none at all get the same answer");
  t.match(errors[0]!.error, /no network Berth made for this organization has this name/);
  const record = await a.get('network.one', { networkId: lostId });
  t.equal(record.status, 200, 'the record takes the id its labels name');
  t.match(record.body, { name: lost, driver: 'bridge', enableIPv4: true, serverId: null, organizationId: admin.organizationId });
  t.equal((await a.get('network.inspect', { networkId: lostId })).status, 200, 'and inspects it');
  t.same((await a.post('network.import', { names: [lost] })).body, { imported: [], errors: [{ name: lost, error: 'Already imported' }] });
  t.same((await b.post('network.import', { names: [lost] })).body.imported, [], 'B cannot take it');
  t.equal((await a.post('network.remove', { networkId: lostId })).status, 200);
  t.equal(await onEngine(docker, lost), null, 'removed like any of its networks');
  t.ok(await onEngine(docker, plain), 'the foreign networks are untouched');
  t.ok(await onEngine(docker, theirs));
});

t.test('a name that is the start of two networks’ ids is a name nothing holds, not an engine error', async t => {
  // Seventeen networks at least: local ids are hex, so two of them start with the same character.
  const extra: string[] = [];
  t.teardown(async () => {
    for (const n of extra) await removeFromEngine(docker, n);
  });
  while ((await docker.listNetworks()).length + extra.length < 17) {
    const n = name('prefix');
    await docker.createNetwork({ Name: n, Driver: 'bridge' });
    extra.push(n);
  }
  const ids = (await docker.listNetworks()).map(n => n.Id);
  const prefix = [...new Set(ids.map(id => id[0]!))].find(c => ids.filter(id => id.startsWith(c)).length >= 2)!;
  t.ok(prefix, `the ids ${prefix} starts two of`);
  const result = await a.post('network.import', { names: [prefix] });
  t.equal(result.status, 200, JSON.stringify(result.body));
  t.same(result.body.imported, []);
  t.match(result.body.errors, [{ name: prefix, error: /no network Berth made for this organization has this name/ }], 'answered as a name nothing holds');
});

t.test('a record whose name another network now holds: inspect and recreate refuse it, remove leaves it alone', async t => {
  const n = name('taken-over');
  const { networkId } = ok(await a.post('network.create', { name: n }), 'network.create') as { networkId: string };
  await removeFromEngine(docker, n);
  await docker.createNetwork({ Name: n, Driver: 'bridge' });
  const inspected = await a.get('network.inspect', { networkId });
  t.equal(inspected.status, 409);
  t.match(inspected.body.message, /is not Berth's network for this record/);
  t.equal((await a.post('network.recreate', { networkId })).status, 409);
  t.same((await a.get('network.networksToSync')).body.missing, [{ networkId, name: n }], 'the record is missing its network');
  t.equal((await a.post('network.remove', { networkId })).status, 200, 'the record goes');
  const still = await onEngine(docker, n);
  t.ok(still, 'the foreign network stays');
  t.same(still?.Labels ?? {}, {});
});

t.test("another organization's records and servers answer 404", async t => {
  const { networkId, name: n } = ok(await a.post('network.create', { name: name('private') }), 'network.create') as { networkId: string; name: string };
  for (const [op, kind] of [
    ['network.one', 'get'],
    ['network.inspect', 'get'],
    ['network.recreate', 'post'],
    ['network.remove', 'post'],
  ] as const) {
    const r = kind === 'get' ? await b.get(op, { networkId }) : await b.post(op, { networkId });
    t.equal(r.status, 404, `${op}: 404`);
    t.notOk(JSON.stringify(r.body).includes(n), 'naming nothing of it');
    const none = kind === 'get' ? await b.get(op, { networkId: 'M'.repeat(networkId.length) }) : await b.post(op, { networkId: 'M'.repeat(networkId.length) });
    t.equal(JSON.stringify(r.body).replace(networkId, '<id>'), JSON.stringify(none.body).replace('M'.repeat(networkId.length), '<id>'), 'as for no record at all');
  }
  t.notOk(
    ((await b.get('network.all')).body as { networkId: string }[]).some(x => x.networkId === networkId),
    "B's list does not hold it",
  );
  t.ok(await onEngine(docker, n), 'the network is still there');
  t.equal((await a.get('network.one', { networkId })).status, 200, "and A's record");
  // A server of A's (no key: nothing connects): every procedure taking serverId answers B 404.
  const srv = ok(await a.post('server.create', { name: 'a-server', ipAddress: '192.0.2.10', port: 22, sshKeyId: null }), 'server.create') as { serverId: string };
  t.equal((await a.get('network.all', { serverId: srv.serverId })).status, 200, "A lists its server's networks");
  for (const [op, input, kind] of [
    ['network.all', { serverId: srv.serverId }, 'get'],
    ['network.networksToSync', { serverId: srv.serverId }, 'get'],
    ['network.create', { name: name('on-their-server'), serverId: srv.serverId }, 'post'],
    ['network.import', { names: ['x'], serverId: srv.serverId }, 'post'],
  ] as const) {
    const r = kind === 'get' ? await b.get(op, input) : await b.post(op, input);
    t.equal(r.status, 404, `${op} with A's server: 404`);
  }
});

t.test('a workload joins its organization’s network by name; a network of another organization is refused at deploy', async t => {
  const own = ok(await b.post('network.create', { name: name('join'), driver: 'overlay', attachable: true }), 'network.create') as { networkId: string; name: string };
  const foreign = ok(await a.post('network.create', { name: name('not-b'), driver: 'overlay' }), 'network.create') as { networkId: string; name: string };
  const environmentId = (ok(await b.post('project.create', { name: 'joins' }), 'project.create') as { environment: { environmentId: string } }).environment.environmentId;
  const app = async (appName: string, network: string) => {
    const made = ok(await b.post('application.create', { name: appName, environmentId }), 'application.create') as { applicationId: string; appName: string };
    ok(await b.post('application.saveDockerProvider', { applicationId: made.applicationId, dockerImage: TEST_BASE_IMAGE }), 'saveDockerProvider');
    ok(await b.post('application.update', { applicationId: made.applicationId, command: 'sleep', args: ['3600'], networkSwarm: [{ Target: network }] }), 'application.update');
    return made;
  };
  const joined = await app('joins', own.name);
  t.teardown(() => b.post('application.delete', { applicationId: joined.applicationId }));
  const done = await runFinished(b, 'application.deploy', { applicationId: joined.applicationId });
  t.equal(done.status, 'done', `deploy: ${done.errorMessage ?? ''}`);
  const networkOf = (await onEngine(docker, own.name))!.Id;
  const spec = (await docker.getService(joined.appName).inspect()) as { Spec: { TaskTemplate: { Networks?: { Target: string }[] } } };
  t.ok(
    (spec.Spec.TaskTemplate.Networks ?? []).some(n => n.Target === networkOf || n.Target === own.name),
    "the service is on the organization's network",
  );
  const busy = await b.post('network.remove', { networkId: own.networkId });
  t.equal(busy.status, 409, 'remove: 409 while a service uses it');
  t.match(busy.body.message, new RegExp(`in use by service ${joined.appName}`));
  t.ok(await onEngine(docker, own.name), 'the network stays');

  const intruder = await app('intrudes', foreign.name);
  t.teardown(() => b.post('application.delete', { applicationId: intruder.applicationId }));
  const refused = await runFinished(b, 'application.deploy', { applicationId: intruder.applicationId });
  t.equal(refused.status, 'error', "a deploy naming another organization's network fails");
  t.match(refused.errorMessage, /is not this organization's/);

  ok(await b.post('application.delete', { applicationId: joined.applicationId }), 'application.delete');
  const removed = await waitFor(
    'the network removed once its service is gone',
    async () => {
      const r = await b.post('network.remove', { networkId: own.networkId });
      return r.status === 200 ? r : r.status === 409 ? undefined : Promise.reject(new Error(JSON.stringify(r.body)));
    },
    { timeout: 60_000, interval: 500 },
  );
  t.equal(removed.status, 200);
  t.equal(await onEngine(docker, own.name), null, 'gone from the engine');
});

t.test("an organization's networks go with it", async t => {
  // A user who owns two organizations deletes one of them.
  const email = 'owner@example.com';
  ok(await a.post('user.createUserWithCredentials', { email, password: 'owner-password-1', role: 'member' }), 'user.createUserWithCredentials');
  const login = ok(await new Client(server.url).post('auth.login', { email, password: 'owner-password-1' }), 'auth.login') as { token: string };
  const owner = new Client(server.url, { token: login.token });
  ok(await owner.post('organization.create', { name: 'kept' }), 'organization.create');
  const doomed = ok(await owner.post('organization.create', { name: 'doomed' }), 'organization.create') as { id: string };
  const key = ok(await owner.post('user.createApiKey', { name: 'doomed', metadata: { organizationId: doomed.id } }), 'user.createApiKey') as { key: string };
  const inDoomed = new Client(server.url, { apiKey: key.key });
  const n = ok(await inDoomed.post('network.create', { name: name('doomed') }), 'network.create') as { name: string };
  t.ok(await onEngine(docker, n.name));
  ok(await owner.post('organization.delete', { organizationId: doomed.id }), 'organization.delete');
  t.equal(await onEngine(docker, n.name), null, 'its network is gone from the engine');
});

t.test('on a server: the network is made on its engine, never on this machine’s', async t => {
  if (!canRun(t, 'remote-hosts', remoteHostsMissing())) return;
  const {
    hosts: [host],
  } = await sharedRemoteHosts(1);
  const remote = new Docker({ socketPath: host!.socket });
  const key = ok(await a.post('sshKey.create', { name: 'kit host', privateKey: host!.privateKey, publicKey: host!.publicKey }), 'sshKey.create') as { sshKeyId: string };
  const srv = ok(
    await a.post('server.create', { name: 'kit host', ipAddress: host!.address, port: 22, username: host!.user, sshKeyId: key.sshKeyId, hostKeyFingerprint: host!.hostKeyFingerprint }),
    'server.create',
  ) as { serverId: string };
  const n = name('remote');
  t.teardown(() => removeFromEngine(remote, n));
  const made = await a.post('network.create', { name: n, driver: 'overlay', attachable: true, serverId: srv.serverId });
  t.equal(made.status, 200, JSON.stringify(made.body));
  t.equal(made.body.serverId, srv.serverId);
  // The swarm's allocator fills the driver in a moment after the create.
  const there = await waitFor('the network allocated on the server', async () => {
    const found = await onEngine(remote, n);
    return found?.Driver ? found : undefined;
  });
  t.match(
    there,
    { Driver: 'overlay', Scope: 'swarm', Attachable: true, Labels: { 'berth.kind': 'network', 'berth.id': made.body.networkId, 'berth.organization': admin.organizationId } },
    "on the server's engine, labelled",
  );
  t.equal(await onEngine(docker, n), null, "not on this machine's");
  t.same(
    ((await a.get('network.all', { serverId: srv.serverId })).body as { networkId: string }[]).map(x => x.networkId),
    [made.body.networkId],
    "all with the serverId lists the server's",
  );
  t.notOk(
    ((await a.get('network.all')).body as { networkId: string }[]).some(x => x.networkId === made.body.networkId),
    "this machine's list does not",
  );
  t.equal((await a.get('network.inspect', { networkId: made.body.networkId })).body.Id, there?.Id, "inspect reads the server's engine");
  // A network of the same name on this machine is another host's business.
  t.equal((await a.post('network.create', { name: n })).status, 200, 'the same name on this machine is another network');
  t.equal((await b.get('network.all', { serverId: srv.serverId })).status, 404, "B: A's server is not found");
  await removeFromEngine(remote, n);
  t.same((await a.get('network.networksToSync', { serverId: srv.serverId })).body.missing, [{ networkId: made.body.networkId, name: n }], "sync reads the server's engine");
  t.equal((await a.post('network.recreate', { networkId: made.body.networkId })).status, 200);
  t.ok(await onEngine(remote, n), 'made again on the server');
  t.equal((await a.post('network.remove', { networkId: made.body.networkId })).status, 200);
  t.equal(await onEngine(remote, n), null, 'removed from the server');
  t.ok(await onEngine(docker, n), "this machine's network of that name is untouched");
});
