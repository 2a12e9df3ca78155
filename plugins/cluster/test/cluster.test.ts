// A real multi-node swarm: three kit hosts (network namespaces with their own dockerd and sshd) are
// added as servers; Berth joins the second to the first's swarm as a worker and the third as a
// manager over their own SSH connections, lists the nodes and what runs on each, drains and removes
// the worker (its task moves, the answer says where) — and no answer carries a join token, each
// token used is rotated. A manager advertising loopback (this machine's test swarm) is refused
// with the reason; another organization's server is 404 on every operation.
import t from 'tap';
import Docker from 'dockerode';
import { canRun, otherOrganization, signUpAdmin, startTestServer, waitFor, TEST_BASE_IMAGE } from '@berth/core/testing';
import { inHost, loadImage, remoteHostsMissing, sharedRemoteHosts, type RemoteHost } from '@berth/test/remote-hosts';

t.setTimeout(600_000);

if (canRun(t, 'remote-hosts', remoteHostsMissing())) {
  // Hosts 2 to 4 of the run: other files use the first alone, and these change swarm membership.
  const [, a, b, c] = (await sharedRemoteHosts(4)).hosts as [RemoteHost, RemoteHost, RemoteHost, RemoteHost];
  const leave = () => Promise.all([a, b, c].map(h => inHost(h, ['docker', 'swarm', 'leave', '--force'])));
  await leave();
  t.teardown(leave);
  await Promise.all([a, b, c].map(h => loadImage(h, TEST_BASE_IMAGE)));
  const engineA = new Docker({ socketPath: a.socket });

  const server = await startTestServer({ proxy: 'none', jobs: false });
  t.teardown(() => server.destroy());
  const { client, userId, organizationId } = await signUpAdmin(server);
  /** Every answer of the file, searched for tokens at the end. */
  const answers: string[] = [];
  const call = async (op: string, input: Record<string, unknown>, kind: 'get' | 'post' = 'get') => {
    const res = kind === 'get' ? await client.get(op, input) : await client.post(op, input);
    answers.push(JSON.stringify(res.body));
    return res;
  };
  const key = await client.post('sshKey.create', { name: 'kit', privateKey: a.privateKey, publicKey: a.publicKey });
  const serverOf = async (h: RemoteHost) => {
    const res = await client.post('server.create', { name: h.name, ipAddress: h.address, port: 22, username: 'root', sshKeyId: key.body.sshKeyId, hostKeyFingerprint: h.hostKeyFingerprint });
    if (res.status !== 200) throw new Error(`server.create: ${JSON.stringify(res.body)}`);
    return res.body.serverId as string;
  };
  const [A, B, C] = [await serverOf(a), await serverOf(b), await serverOf(c)];
  /** Every join token seen on A's swarm. */
  const tokens = new Set<string>();
  const readTokens = async () => {
    const { JoinTokens } = await engineA.swarmInspect();
    tokens.add(JoinTokens.Worker);
    tokens.add(JoinTokens.Manager);
    return JoinTokens as { Worker: string; Manager: string };
  };

  t.test("a manager advertising loopback is refused with the reason (this machine's test swarm)", async t => {
    const local = (await new Docker().info()) as { Swarm?: { NodeAddr?: string } };
    if (!local.Swarm?.NodeAddr?.startsWith('127.')) return void t.pass(`this machine's swarm advertises ${local.Swarm?.NodeAddr}: nothing to refuse`);
    const res = await call('cluster.joinServer', { serverId: B, managerServerId: null, role: 'worker' }, 'post');
    t.equal(res.status, 409, JSON.stringify(res.body));
    t.match(res.body.message, /advertises 127\.0\.0\.1, which no other server can reach/);
    t.match(res.body.message, /swarmAdvertiseAddr/);
    t.equal((await inHost(b, ['docker', 'info', '--format', '{{.Swarm.LocalNodeState}}'])).stdout.trim(), 'inactive', 'the server was not touched');
  });

  t.test('addWorker / addManager answer the command with the placeholder, never a token', async t => {
    for (const op of ['cluster.addWorker', 'cluster.addManager']) {
      const res = await call(op, { serverId: A });
      t.equal(res.status, 200, JSON.stringify(res.body));
      t.equal(res.body.command, `docker swarm join --token <use cluster.joinServer> ${a.address}:2377`, op);
      t.match(res.body.version, /^\d+\.\d+/);
    }
    await readTokens();
  });

  let workerNode = '';
  t.test('joinServer as a worker: over SSH, advertising its own interface; the worker token rotated', async t => {
    const before = await readTokens();
    const t0 = performance.now();
    const res = await call('cluster.joinServer', { serverId: B, managerServerId: A, role: 'worker' }, 'post');
    t.comment(`joinServer (worker) took ${Math.round(performance.now() - t0)} ms`);
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.match(res.body, { serverId: B, managerServerId: A, role: 'worker', advertiseAddr: b.address });
    workerNode = res.body.nodeId;
    t.equal((await inHost(b, ['docker', 'info', '--format', '{{.Swarm.NodeID}} {{.Swarm.ControlAvailable}}'])).stdout.trim(), `${workerNode} false`, 'the server is a worker of that swarm');
    const after = await readTokens();
    t.not(after.Worker, before.Worker, 'the worker token was rotated');
    t.equal(after.Manager, before.Manager, 'the manager token was not');
    const again = await call('cluster.joinServer', { serverId: B, managerServerId: A, role: 'worker' }, 'post');
    t.equal(again.body.nodeId, workerNode, 'joining again answers the same node');
    const asManager = await call('cluster.joinServer', { serverId: B, managerServerId: A, role: 'manager' }, 'post');
    t.equal(asManager.status, 409, 'a worker does not join again as a manager');
  });

  t.test('joinServer as a manager: the manager token rotated', async t => {
    const before = await readTokens();
    const res = await call('cluster.joinServer', { serverId: C, managerServerId: A, role: 'manager' }, 'post');
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.equal((await inHost(c, ['docker', 'info', '--format', '{{.Swarm.ControlAvailable}}'])).stdout.trim(), 'true', 'the server is a manager');
    const after = await readTokens();
    t.not(after.Manager, before.Manager, 'the manager token was rotated');
  });

  t.test('getNodes, getNodeInfo and cluster.getNodes list the three nodes in the peer shapes', async t => {
    const lines = await call('swarm.getNodes', { serverId: A });
    t.equal(lines.status, 200, JSON.stringify(lines.body));
    const byHost = Object.fromEntries((lines.body as Record<string, unknown>[]).map(l => [l.Hostname, l]));
    t.same(Object.keys(byHost).sort(), [a.name, b.name, c.name].sort());
    t.same(Object.keys(byHost[a.name]!).sort(), ['Availability', 'EngineVersion', 'Hostname', 'ID', 'ManagerStatus', 'Self', 'Status', 'TLSStatus']);
    t.match(byHost[a.name], { Self: true, ManagerStatus: 'Leader', Availability: 'Active', TLSStatus: 'Ready' });
    t.match(byHost[b.name], { Self: false, ManagerStatus: '', ID: workerNode });
    t.match(byHost[c.name], { ManagerStatus: 'Reachable' });
    const cli = (await inHost(a, ['docker', 'node', 'ls', '--format', '{{json .}}'])).stdout
      .trim()
      .split('\n')
      .map(l => JSON.parse(l) as Record<string, unknown>);
    const comparable = (ls: Record<string, unknown>[]) => ls.map(l => ({ ...l, Status: 'x' }) as Record<string, unknown>).sort((x, y) => String(x.ID).localeCompare(String(y.ID)));
    t.same(comparable(lines.body as Record<string, unknown>[]), comparable(cli), "the same lines as the CLI's docker node ls (the status aside, which may change between the two reads)");
    const info = await call('swarm.getNodeInfo', { serverId: A, nodeId: workerNode });
    t.equal(info.status, 200);
    t.match(info.body, { ID: workerNode, Spec: { Role: 'worker' }, Description: { Hostname: b.name } });
    const nodes = await call('cluster.getNodes', { serverId: A });
    t.equal(nodes.body.length, 3);
    const missing = await call('swarm.getNodeInfo', { serverId: A, nodeId: 'nosuchnode0000' });
    t.equal(missing.status, 404, 'a node the swarm lacks is 404');
    t.match(missing.body.message, /nosuchnode0000/, "with the engine's reason");
    const onWorker = await call('swarm.getNodes', { serverId: B });
    t.equal(onWorker.status, 409, "a worker's engine cannot list the nodes");
    t.match(onWorker.body.message, /not a swarm manager/, "the engine's reason");
  });

  let serviceId = '';
  // Removed when the file ends (the drain below needs them), before the hosts leave their swarms.
  const services: string[] = [];
  t.teardown(() =>
    Promise.all(
      services.map(id =>
        engineA
          .getService(id)
          .remove()
          .catch(() => undefined),
      ),
    ),
  );
  t.test("getNodeApps lists the organization's services with the nodes their tasks run on", async t => {
    const spec = {
      Name: `cluster-web-${process.pid}`,
      Labels: { 'berth.organization': organizationId },
      TaskTemplate: { ContainerSpec: { Image: TEST_BASE_IMAGE, Command: ['sleep', '3600'], Init: true, StopGracePeriod: 1_000_000_000 } },
      Mode: { Replicated: { Replicas: 3 } },
    };
    serviceId = ((await engineA.createService(spec as never)) as { id: string }).id;
    services.push(serviceId);
    const foreign = await engineA.createService({ ...spec, Name: `cluster-theirs-${process.pid}`, Labels: { 'berth.organization': 'someone-else' }, Mode: { Replicated: { Replicas: 0 } } } as never);
    services.push((foreign as { id: string }).id);
    const apps = await waitFor(
      'three running tasks',
      async () => {
        const res = await call('swarm.getNodeApps', { serverId: A });
        return res.body[0]?.nodes.filter((n: { state: string }) => n.state === 'running').length === 3 && res.body[0].Replicas === '3/3' ? res.body : undefined;
      },
      { timeout: 60_000, interval: 250 },
    );
    t.equal(apps.length, 1, "another organization's service is not listed");
    t.same(Object.keys(apps[0]).sort(), ['ID', 'Image', 'Mode', 'Name', 'Ports', 'Replicas', 'nodes']);
    t.match(apps[0], { ID: serviceId, Image: TEST_BASE_IMAGE, Mode: 'replicated', Name: spec.Name, Ports: '', Replicas: '3/3' });
    t.same([...new Set(apps[0].nodes.map((n: { hostname: string }) => n.hostname))].sort(), [a.name, b.name, c.name].sort(), 'spread over the three nodes');
  });

  t.test('removeWorker drains the worker, its task runs elsewhere, then removes it; the answer says where', async t => {
    const t0 = performance.now();
    const res = await call('cluster.removeWorker', { serverId: A, nodeId: workerNode }, 'post');
    t.comment(`removeWorker took ${Math.round(performance.now() - t0)} ms`);
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.match(res.body, { removed: true, nodeId: workerNode, hostname: b.name });
    t.equal(res.body.moved.length, 1, 'the one task that ran there');
    const moved = res.body.moved[0];
    t.equal(moved.service, `cluster-web-${process.pid}`);
    t.ok([a.name, c.name].includes(moved.to.hostname), `moved to ${moved.to.hostname}`);
    const task = (await engineA.getTask(moved.to.taskId).inspect()) as { NodeID: string; Status: { State: string } };
    t.match(task, { NodeID: moved.to.nodeId, Status: { State: 'running' } }, 'the task it names runs there');
    t.notOk(
      (await engineA.listNodes()).some((n: { ID: string }) => n.ID === workerNode),
      'the node is gone',
    );
    t.equal((await client.get('server.one', { serverId: B })).status, 200, 'its server record stays');
    const left = (await new Docker({ socketPath: b.socket }).info()) as { Swarm?: { LocalNodeState?: string } };
    t.equal(left.Swarm?.LocalNodeState, 'inactive', "the worker's own engine left the swarm: it does not believe it is in one");
    const manager = await call('cluster.removeWorker', { serverId: A, nodeId: (await call('swarm.getNodes', { serverId: C })).body.find((l: { Self: boolean }) => l.Self).ID }, 'post');
    t.equal(manager.status, 409, 'a manager is not removed as a worker');
    t.match(manager.body.message, /is a manager/);
  });

  t.test("another organization's server is 404 on every operation", async t => {
    const other = await otherOrganization(server, userId);
    const ops: [string, Record<string, unknown>, 'get' | 'post'][] = [
      ['swarm.getNodes', { serverId: A }, 'get'],
      ['swarm.getNodeInfo', { serverId: A, nodeId: 'abc' }, 'get'],
      ['swarm.getNodeApps', { serverId: A }, 'get'],
      ['cluster.getNodes', { serverId: A }, 'get'],
      ['cluster.addWorker', { serverId: A }, 'get'],
      ['cluster.addManager', { serverId: A }, 'get'],
      ['cluster.joinServer', { serverId: B, managerServerId: null, role: 'worker' }, 'post'],
      ['cluster.joinServer', { serverId: 'none', managerServerId: A, role: 'worker' }, 'post'],
      ['cluster.removeWorker', { serverId: A, nodeId: 'abc' }, 'post'],
    ];
    for (const [op, input, kind] of ops) {
      const res = kind === 'get' ? await other.client.get(op, input) : await other.client.post(op, input);
      answers.push(JSON.stringify(res.body));
      t.equal(res.status, 404, `${op} ${JSON.stringify(input)}`);
    }
  });

  t.test('no answer carried a join token', async t => {
    await readTokens();
    t.ok(tokens.size >= 4, `${tokens.size} tokens seen`);
    const all = answers.join('\n');
    t.ok(answers.length > 20, `${answers.length} answers searched`);
    for (const token of tokens) t.notOk(all.includes(token), 'a token is absent');
    t.notOk(/SWMTKN-/.test(all), 'nothing shaped like one either');
  });
}
