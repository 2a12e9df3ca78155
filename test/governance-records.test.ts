// A member given one service reaches the records inside it — domains, redirects, basic-auth users,
// mounts, ports, patches, schedules, deployments — by their own ids, and none of another service's:
// those answer 404, the answer for a record that does not exist (the plugins' `berth.recordOwners`,
// checked by the transport). The same call naming the given service's record is answered, and the
// organization's admin reaches both.
import t from 'tap';
import { addMember, freePort, noGrants, signUpAdmin, startTestServer, type Client, type Reply } from '@berth/core/testing';

t.setTimeout(300_000);

/** The records of one application, each made by the admin without deploying anything. */
interface Records {
  applicationId: string;
  domainId: string;
  redirectId: string;
  securityId: string;
  mountId: string;
  portId: string;
  patchId: string;
  scheduleId: string;
  deploymentId: string;
}

/** Each kind's read by its own id: the procedure and its id field. */
const READS: [string, keyof Records][] = [
  ['domain.one', 'domainId'],
  ['redirects.one', 'redirectId'],
  ['security.one', 'securityId'],
  ['mounts.one', 'mountId'],
  ['port.one', 'portId'],
  ['patch.one', 'patchId'],
  ['schedule.one', 'scheduleId'],
  ['deployment.one', 'deploymentId'],
];

const message = (r: Reply) => String(r.body?.message ?? '');

t.test("a member given one service reaches its records, not another service's", async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const a = admin.client;
  const made = async (op: string, input: Record<string, unknown>) => {
    const r = await a.post(op, input);
    if (r.status !== 200) throw new Error(`${op}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const { project, environment } = await made('project.create', { name: 'Records' });
  const { environmentId } = environment as { environmentId: string };
  const other = (await made('environment.create', { projectId: project.projectId, name: 'elsewhere' })).environmentId as string;

  const recordsOf = async (name: string): Promise<Records> => {
    const { applicationId } = await made('application.create', { name, environmentId });
    const one = async () => (await a.get('application.one', { applicationId })).body;
    await made('redirects.create', { applicationId, regex: `^https?://${name}/(.*)`, replacement: 'https://example.com/$1', permanent: false });
    await made('security.create', { applicationId, username: `${name}-user`, password: 'a password' });
    // Nothing to deploy: with the jobs off, the deployment stays queued on the record.
    t.equal((await a.post('application.deploy', { applicationId })).status, 200, `${name} deploys`);
    const deployments = (await a.get('deployment.all', { applicationId })).body as { deploymentId: string }[];
    return {
      applicationId,
      domainId: (await made('domain.create', { host: `${name}.records.example.com`, applicationId, port: 80 })).domainId,
      redirectId: (await one()).redirects[0].redirectId,
      securityId: (await one()).security[0].securityId,
      mountId: (await made('mounts.create', { type: 'volume', volumeName: `${name}-data`, mountPath: '/data', serviceId: applicationId, serviceType: 'application' })).mountId,
      portId: (await made('port.create', { applicationId, publishedPort: await freePort(), targetPort: 80, protocol: 'tcp' })).portId,
      patchId: (await made('patch.create', { applicationId, filePath: 'patched.txt', content: 'patched' })).patchId,
      scheduleId: (
        await made('schedule.create', { name: `${name}-nightly`, cronExpression: '0 3 * * *', command: 'true', shellType: 'sh', scheduleType: 'application', applicationId, enabled: false })
      ).scheduleId,
      deploymentId: deployments[0]!.deploymentId,
    };
  };
  const given = await recordsOf('given');
  const notGiven = await recordsOf('withheld');

  // The member role (domains, volumes, schedules, deployments, reading services) and one service of the two.
  const member = await addMember(server, a, 'records@example.com', 'member', 'member-password-1', 'token', 'none');
  const grants = { ...noGrants(member.userId), accessedProjects: [project.projectId], accessedEnvironments: [environmentId], accessedServices: [given.applicationId] };
  t.equal((await a.post('user.assignPermissions', grants)).status, 200);
  const c: Client = member.client;

  t.test("reading each record by its id: the given service's answers, the other's is 404 as an unknown id", async t => {
    for (const [op, field] of READS) {
      const mine = await c.get(op, { [field]: given[field] });
      t.equal(mine.status, 200, `${op}: the given service's ${field} answers (the positive control)`);
      t.equal(mine.body?.[field], given[field], `${op}: it is that record`);
      const theirs = await c.get(op, { [field]: notGiven[field] });
      const unknown = await c.get(op, { [field]: 'no-such-record' });
      t.equal(theirs.status, 404, `${op}: the other service's ${field} is not found`);
      t.equal(unknown.status, 404, `${op}: an unknown ${field} is not found (the handler's own answer)`);
      t.equal(message(theirs), message(unknown), `${op}: the two answers cannot be told apart (${message(theirs)})`);
      for (const id of [given[field], notGiven[field]]) t.equal((await a.get(op, { [field]: id })).status, 200, `${op}: the admin reaches ${id}`);
    }
  });

  t.test("a generic id read as the record its type names: the given service's answers, the other's is 404", async t => {
    const reads: [string, (r: Records) => Record<string, string>][] = [
      ['deployment.allByType', r => ({ id: r.applicationId, type: 'application' })],
      ['deployment.allByType', r => ({ id: r.scheduleId, type: 'schedule' })],
      ['schedule.list', r => ({ id: r.applicationId, scheduleType: 'application' })],
      ['patch.byEntityId', r => ({ id: r.applicationId, type: 'application' })],
      ['volumeBackups.list', r => ({ id: r.applicationId, volumeBackupType: 'application' })],
    ];
    for (const [op, input] of reads) {
      const what = `${op} ${JSON.stringify(Object.keys(input(given)))} (${Object.values(input(given))[1]})`;
      t.equal((await c.get(op, input(given))).status, 200, `${what}: the given service's answers (the control)`);
      t.equal((await c.get(op, input(notGiven))).status, 404, `${what}: the other service's is not found`);
      t.equal((await a.get(op, input(notGiven))).status, 200, `${what}: the admin reaches it`);
    }
  });

  t.test("servers: a member given one sees and names that one only (the peer's accessedServers)", async t => {
    const serverOf = async (name: string, ipAddress: string) => (await made('server.create', { name, ipAddress, port: 22, sshKeyId: null })).serverId as string;
    const [mine, theirs] = [await serverOf('given-host', '192.0.2.21'), await serverOf('withheld-host', '192.0.2.22')];
    const listed = async (client: Client) => ((await client.get('server.all')).body as { serverId: string }[]).map(s => s.serverId).filter(id => id === mine || id === theirs);
    t.same((await listed(a)).sort(), [mine, theirs].sort(), 'the admin lists both (the control)');
    // The member role reads no server (the peer's): a custom role that does, and deployments.
    t.equal((await a.post('customRole.create', { roleName: 'server-reader', permissions: { server: ['read'], deployment: ['read'] } })).status, 200);
    t.equal((await a.post('organization.updateMemberRole', { memberId: member.userId, role: 'server-reader' })).status, 200);
    t.same(await listed(c), [], 'a member given no server lists none of them');
    t.equal((await c.get('server.one', { serverId: mine })).status, 404, 'nor reads one');
    t.equal((await a.post('user.assignPermissions', { ...grants, accessedServers: [mine] })).status, 200);
    t.same(await listed(c), [mine], 'given one: it lists that one');
    t.equal((await c.get('server.one', { serverId: mine })).status, 200, 'and reads it');
    const other = await c.get('server.one', { serverId: theirs });
    t.equal(other.status, 404, 'the other is not found');
    t.equal(message(other), message(await c.get('server.one', { serverId: 'no-such-server' })), 'as an unknown id is');
    const deploymentsOf = (serverId: string) => c.get('deployment.allByType', { id: serverId, type: 'server' });
    t.equal((await deploymentsOf(theirs)).status, 404, 'its deployments are not found either (the generic id read as a serverId)');
    t.same((await deploymentsOf(mine)).body, [], "the given server's answer (none yet)");
    t.equal((await a.post('user.assignPermissions', grants)).status, 200, 'the grants as they were');
    t.equal((await a.post('organization.updateMemberRole', { memberId: member.userId, role: 'member' })).status, 200, 'and the role');
  });

  t.test("the organization's deployment lists show the member the given service's deployments only", async t => {
    const ids = (r: Reply, key: string) => (r.body as Record<string, string>[]).map(d => (key === 'id' ? d.id : d[key]));
    for (const [op, key] of [
      ['deployment.allCentralized', 'deploymentId'],
      ['deployment.queueList', 'id'],
    ] as const) {
      const all = await a.get(op);
      t.equal(all.status, 200);
      t.ok(ids(all, key).includes(given.deploymentId) && ids(all, key).includes(notGiven.deploymentId), `${op}: the admin sees both services' deployments (the control)`);
      const mine = await c.get(op);
      t.equal(mine.status, 200);
      t.same(ids(mine, key), [given.deploymentId], `${op}: the member sees the given service's only`);
    }
  });

  t.test("changing a record of the other service is refused and changes nothing; the given service's is changed", async t => {
    const removals: [string, string, keyof Records][] = [
      ['domain.delete', 'domain.one', 'domainId'],
      ['mounts.remove', 'mounts.one', 'mountId'],
      ['schedule.delete', 'schedule.one', 'scheduleId'],
    ];
    for (const [op, read, field] of removals) {
      t.equal((await c.post(op, { [field]: notGiven[field] })).status, 404, `${op}: the other service's is not found`);
      t.equal((await a.get(read, { [field]: notGiven[field] })).status, 200, `${op}: it is still there`);
      t.equal((await c.post(op, { [field]: given[field] })).status, 200, `${op}: the given service's is removed (the positive control)`);
      t.equal((await a.get(read, { [field]: given[field] })).status, 404, `${op}: it is gone`);
    }
    // mounts.create names its service by serviceId: the other service's is refused too.
    const mount = (applicationId: string) =>
      c.post('mounts.create', { type: 'volume', volumeName: `vol-${applicationId.slice(0, 8)}`, mountPath: '/more', serviceId: applicationId, serviceType: 'application' });
    t.equal((await mount(notGiven.applicationId)).status, 404, "mounts.create: the other service's serviceId is not found");
    t.equal((await mount(given.applicationId)).status, 200, "mounts.create: the given service's is answered");
  });

  t.test('a move names the environment it goes to: one not given is refused until given', async t => {
    t.equal((await a.post('user.assignPermissions', { ...grants, canCreateServices: true })).status, 200);
    const move = () => c.post('application.move', { applicationId: given.applicationId, targetEnvironmentId: other });
    const refused = await move();
    t.equal(refused.status, 404, `an environment not given is not found (${message(refused)})`);
    t.equal((await a.get('application.one', { applicationId: given.applicationId })).body.environmentId, environmentId, 'the application stayed');
    t.equal((await a.post('user.assignPermissions', { ...grants, canCreateServices: true, accessedEnvironments: [environmentId, other] })).status, 200);
    t.equal((await move()).status, 200, 'once given, the move is answered (the positive control)');
    t.equal((await a.get('application.one', { applicationId: given.applicationId })).body.environmentId, other, 'the application moved');
  });
});
