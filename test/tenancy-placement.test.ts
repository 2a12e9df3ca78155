// Cross-tenant scheduling, for real: Berth's own engine is a kit host (DOCKER_HOST names its
// socket, and its swarm advertises the host's routable address), and a second kit host is a server
// of organization B, joined to this machine's swarm as a worker by an instance operator acting in
// B. Placement by ownership: this machine's node is shared (every organization's label), B's
// node carries B's label alone. An application of organization A with several replicas never has a
// task on B's node; B's application does land there (the positive control), with B's own narrowing
// constraint kept as B wrote it.
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

  const key = await b.post('sshKey.create', { name: 'tenant', privateKey: tenant.privateKey, publicKey: tenant.publicKey });
  if (key.status !== 200) throw new Error(`sshKey.create: ${JSON.stringify(key.body)}`);
  const added = await b.post('server.create', {
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

  t.test("B's server joins this machine's swarm as a worker, labelled B's alone; this machine's node is shared", async t => {
    const joined = await b.post('cluster.joinServer', { serverId: SERVER, role: 'worker' });
    t.equal(joined.status, 200, JSON.stringify(joined.body));
    tenantNode = joined.body.nodeId as string;
    machineNode = ((await engine.info()) as { Swarm: { NodeID: string } }).Swarm.NodeID;
    const own = await labelsOf(tenantNode);
    t.equal(own[`berth.org.${B}`], 'true', "B's node carries B's label");
    t.equal(own[`berth.org.${A}`], undefined, "and not A's");
    t.equal(own['berth.shared'], undefined, 'it is not shared');
    t.equal(own['berth.organization'], B, "it is marked B's own");
    const shared = await labelsOf(machineNode);
    t.equal(shared['berth.shared'], 'true', "this machine's node is shared");
    t.equal(shared[`berth.org.${A}`], 'true');
    t.equal(shared[`berth.org.${B}`], 'true');
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

  t.test("no task of A's application ever lands on B's node", async t => {
    const app = await deploy(t, a, 'a-web', 4);
    t.same(app.constraints, [`node.labels.berth.org.${A}==true`], "the service carries A's constraint");
    t.same(app.nodes, [machineNode, machineNode, machineNode, machineNode], "every task of A on this machine's node");
    // Scaling up and rescheduling: still never B's node.
    t.equal((await a.post('application.update', { applicationId: app.applicationId, replicas: 6 })).status, 200);
    const again = await runFinished(a, 'application.deploy', { applicationId: app.applicationId });
    t.equal(again.status, 'done', again.errorMessage ?? '');
    const tasks = (await engine.listTasks({ filters: { service: [app.appName] } })) as { NodeID?: string }[];
    t.ok(tasks.length >= 6, `${tasks.length} tasks in its history`);
    t.notOk(
      tasks.some(x => x.NodeID === tenantNode),
      "no task of A's, running or past, was ever scheduled on B's node",
    );
    const onTenant = (await tenantEngine.listContainers({ all: true, filters: { label: [`berth.organization=${A}`] } })).length;
    t.equal(onTenant, 0, "no container of A's on B's engine");
  });

  t.test("B's application lands on B's node (the positive control), its own constraint kept", async t => {
    const app = await deploy(t, b, 'b-web', 2, { Constraints: ['node.role==worker'] });
    t.same(app.constraints, [`node.labels.berth.org.${B}==true`, 'node.role==worker'], "B's constraint first, B's own after it");
    t.same(app.record.placementSwarm, { Constraints: ['node.role==worker'] }, 'the record keeps what B wrote');
    t.same(app.nodes, [tenantNode, tenantNode], "both tasks on B's node");
    const mine = await tenantEngine.listContainers({ filters: { label: [`berth.organization=${B}`] } });
    t.equal(mine.length, 2, "B's containers run on B's engine");
  });

  t.test("node listings of a server's swarm show the organization's own nodes only", async t => {
    // B's server is a worker (no listing of its own); this machine's listing is the instance operators'.
    const mine = await b.get('cluster.getNodes', { serverId: SERVER });
    t.not(mine.status, 200, "a worker's engine lists no swarm");
    const all = await a.get('cluster.getNodes', {});
    t.equal(all.status, 200, JSON.stringify(all.body));
    t.same(new Set((all.body as { ID: string }[]).map(n => n.ID)), new Set([machineNode, tenantNode]), "this machine's swarm, both nodes, to the instance operator");
  });

  t.teardown(async () => {
    await inHost(tenant, ['docker', 'swarm', 'leave', '--force']).catch(() => undefined);
    await inHost(machine, ['docker', 'swarm', 'leave', '--force']).catch(() => undefined);
  });
}
