// Cross-tenant scheduling, for real: Berth's own engine is a kit host (DOCKER_HOST names its
// socket, and its swarm advertises the host's routable address), and a second kit host is a server
// of the instance operators' organization A, joined to this machine's swarm as a worker with
// `shared: false`. Placement by ownership: this machine's node is shared (every organization's
// label), the joined node carries A's label alone. An application of organization B with several
// replicas never has a task on A's node; A's application does land there (the positive control),
// with A's own narrowing constraint kept as A wrote it. Only the instance operators join servers to
// this machine's swarm: B's join is refused before anything else is looked at.
import t, { type Test } from 'tap';
import Docker from 'dockerode';
import { canRun, otherOrganization, runFinished, signUpAdmin, startTestServer, waitFor, TEST_STATIC_IMAGE } from '@berth/core/testing';
import { inHost, loadImage, privateRemoteHosts, remoteHostsMissing } from './kit/remote-hosts.ts';

t.setTimeout(900_000);

if (canRun(t, 'remote-hosts', remoteHostsMissing())) {
  const set = await privateRemoteHosts(2);
  t.teardown(() => set.down());
  const [machine, tenant] = set.hosts as [(typeof set.hosts)[0], (typeof set.hosts)[0]];
  await Promise.all([machine, tenant].map(h => loadImage(h, TEST_STATIC_IMAGE)));
  const engine = new Docker({ socketPath: machine.socket });
  const tenantEngine = new Docker({ socketPath: tenant.socket });

  // Berth's local host provider reaches the engine DOCKER_HOST names: the first kit host is "this machine".
  const before = process.env.DOCKER_HOST;
  process.env.DOCKER_HOST = `unix://${machine.socket}`;
  t.teardown(() => {
    if (before === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = before;
  });
  const server = await startTestServer({ deploySettleSeconds: 1, swarmAdvertiseAddr: machine.address });
  t.teardown(() => server.destroy());
  const { client: a, userId, organizationId: A } = await signUpAdmin(server);
  // The instance owner makes organization B (its owner): B's API key acts in B.
  const { client: b, organizationId: B } = await otherOrganization(server, userId);

  const key = await a.post('sshKey.create', { name: 'tenant', privateKey: tenant.privateKey, publicKey: tenant.publicKey });
  if (key.status !== 200) throw new Error(`sshKey.create: ${JSON.stringify(key.body)}`);
  const added = await a.post('server.create', {
    name: 'tenant',
    ipAddress: tenant.address,
    port: 22,
    username: tenant.user,
    sshKeyId: key.body.sshKeyId,
    hostKeyFingerprint: tenant.hostKeyFingerprint,
  });
  if (added.status !== 200) throw new Error(`server.create: ${JSON.stringify(added.body)}`);
  const SERVER = added.body.serverId as string;

  const labelsOf = async (nodeId: string) => ((await engine.getNode(nodeId).inspect()) as { Spec: { Labels?: Record<string, string> } }).Spec.Labels ?? {};
  let machineNode = '';
  let tenantNode = '';

  t.test("only the instance operators join servers to this machine's swarm: B's join is refused first", async t => {
    for (const role of ['worker', 'manager']) {
      const refused = await b.post('cluster.joinServer', { serverId: SERVER, role });
      t.equal(refused.status, 403, `B's join as a ${role}: ${JSON.stringify(refused.body)}`);
    }
    t.equal((await b.get('cluster.getNodes', {})).status, 403, "this machine's node listing is not B's");
  });

  t.test("A's server joins this machine's swarm as a worker, not shared: labelled A's alone; this machine's node is shared", async t => {
    const shared = await a.post('cluster.joinServer', { serverId: SERVER, role: 'worker', managerServerId: SERVER, shared: true });
    t.equal(shared.status, 400, "shared names this machine's swarm only");
    t.match(shared.body, { issues: [{ path: ['shared'] }] });
    const joined = await a.post('cluster.joinServer', { serverId: SERVER, role: 'worker', shared: false });
    t.equal(joined.status, 200, JSON.stringify(joined.body));
    tenantNode = joined.body.nodeId as string;
    machineNode = ((await engine.info()) as { Swarm: { NodeID: string } }).Swarm.NodeID;
    const own = await labelsOf(tenantNode);
    t.equal(own[`berth.org.${A}`], 'true', "the node carries A's label");
    t.equal(own[`berth.org.${B}`], undefined, "and not B's");
    t.equal(own['berth.shared'], undefined, 'it is not shared');
    t.equal(own['berth.organization'], A, "it is marked A's own");
    const shared2 = await labelsOf(machineNode);
    t.equal(shared2['berth.shared'], 'true', "this machine's node is shared");
    t.equal(shared2[`berth.org.${A}`], 'true');
    t.equal(shared2[`berth.org.${B}`], 'true');
  });

  /** An application of the client's organization from the static image, with `replicas` tasks; its tasks' nodes once all run. */
  const deploy = async (t: Test, client: typeof a, name: string, replicas: number, placement?: Record<string, unknown>) => {
    const project = await client.post('project.create', { name: `placement-${name}` });
    t.equal(project.status, 200, JSON.stringify(project.body));
    const environmentId = project.body.environment.environmentId as string;
    const created = await client.post('application.create', { name, environmentId });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const { applicationId, appName } = created.body as { applicationId: string; appName: string };
    t.teardown(() =>
      engine
        .getService(appName)
        .remove()
        .catch(() => undefined),
    );
    t.equal((await client.post('application.saveDockerProvider', { applicationId, dockerImage: TEST_STATIC_IMAGE })).status, 200);
    const updated = await client.post('application.update', { applicationId, replicas, ...(placement ? { placementSwarm: placement } : {}) });
    t.equal(updated.status, 200, JSON.stringify(updated.body));
    const done = await runFinished(client, 'application.deploy', { applicationId });
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
    const tasks = await waitFor(
      `${replicas} running tasks of ${appName}`,
      async () => {
        const list = (await engine.listTasks({ filters: { service: [appName], 'desired-state': ['running'] } })) as { NodeID?: string; Status?: { State?: string } }[];
        return list.length === replicas && list.every(x => x.Status?.State === 'running') ? list : undefined;
      },
      { timeout: 120_000, interval: 500 },
    );
    const spec = (await engine.getService(appName).inspect()) as { Spec: { TaskTemplate: { Placement?: { Constraints?: string[] } } } };
    return {
      applicationId,
      appName,
      nodes: tasks.map(x => x.NodeID!),
      constraints: spec.Spec.TaskTemplate.Placement?.Constraints ?? [],
      record: (await client.get('application.one', { applicationId })).body as Record<string, unknown>,
    };
  };

  t.test("no task of B's application ever lands on A's node", async t => {
    const app = await deploy(t, b, 'b-web', 4);
    t.same(app.constraints, [`node.labels.berth.org.${B}==true`], "the service carries B's constraint");
    t.same(app.nodes, [machineNode, machineNode, machineNode, machineNode], "every task of B on this machine's node");
    // Scaling up and rescheduling: still never A's node.
    t.equal((await b.post('application.update', { applicationId: app.applicationId, replicas: 6 })).status, 200);
    const again = await runFinished(b, 'application.deploy', { applicationId: app.applicationId });
    t.equal(again.status, 'done', again.errorMessage ?? '');
    const tasks = (await engine.listTasks({ filters: { service: [app.appName] } })) as { NodeID?: string }[];
    t.ok(tasks.length >= 6, `${tasks.length} tasks in its history`);
    t.notOk(
      tasks.some(x => x.NodeID === tenantNode),
      "no task of B's, running or past, was ever scheduled on A's node",
    );
    const onTenant = (await tenantEngine.listContainers({ all: true, filters: { label: [`berth.organization=${B}`] } })).length;
    t.equal(onTenant, 0, "no container of B's on A's server's engine");
  });

  t.test("A's application lands on A's node (the positive control), its own constraint kept", async t => {
    const app = await deploy(t, a, 'a-web', 2, { Constraints: ['node.role==worker'] });
    t.same(app.constraints, [`node.labels.berth.org.${A}==true`, 'node.role==worker'], "A's constraint first, A's own after it");
    t.same(app.record.placementSwarm, { Constraints: ['node.role==worker'] }, 'the record keeps what A wrote');
    t.same(app.nodes, [tenantNode, tenantNode], "both tasks on A's node");
    const mine = await tenantEngine.listContainers({ filters: { label: [`berth.organization=${A}`] } });
    t.equal(mine.length, 2, "A's containers run on its server's engine");
  });

  t.test("node listings: this machine's swarm is the instance operators'", async t => {
    // A's server is a worker (no listing of its own); B sees neither.
    const worker = await a.get('cluster.getNodes', { serverId: SERVER });
    t.not(worker.status, 200, "a worker's engine lists no swarm");
    t.equal((await b.get('cluster.getNodes', {})).status, 403, 'not to B');
    t.equal((await b.get('swarm.getNodes', {})).status, 403, 'not to B (swarm.getNodes)');
    const all = await a.get('cluster.getNodes', {});
    t.equal(all.status, 200, JSON.stringify(all.body));
    t.same(new Set((all.body as { ID: string }[]).map(n => n.ID)), new Set([machineNode, tenantNode]), "this machine's swarm, both nodes, to the instance operator");
  });

  t.test('naming the server again changes its sharing: without shared: false it takes every organization', async t => {
    const again = await a.post('cluster.joinServer', { serverId: SERVER, role: 'worker' });
    t.equal(again.status, 200, JSON.stringify(again.body));
    t.equal(again.body.nodeId, tenantNode, 'the same node');
    const labels = await labelsOf(tenantNode);
    t.equal(labels['berth.shared'], 'true');
    t.equal(labels[`berth.org.${B}`], 'true', "B's tasks may run there now");
  });

  t.teardown(async () => {
    await inHost(tenant, ['docker', 'swarm', 'leave', '--force']).catch(() => undefined);
    await inHost(machine, ['docker', 'swarm', 'leave', '--force']).catch(() => undefined);
  });
}
