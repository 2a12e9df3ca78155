// A real multi-node swarm: three kit hosts (network namespaces with their own dockerd and sshd) are
// added as servers; Berth joins the second to the first's swarm as a worker and the third as a
// manager over their own SSH connections, lists the nodes and what runs on each, drains and removes
// the worker (its task moves, the answer says where) — and no answer carries a join token, each
// token used is rotated. A manager advertising loopback (this machine's test swarm) is refused
// with the reason; another organization's server is 404 on every operation.
import t from 'tap';
import Docker from 'dockerode';
import http from 'node:http';
import { addMember, canRun, freePort, otherOrganization, runFinished, signUpAdmin, startTestServer, waitFor, TEST_BASE_IMAGE, TEST_CADDY_IMAGE } from '@berth/core/testing';
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

  // Caddy is the proxy: a domain of a workload on server A is routed by A's own proxy.
  const PROXY = `berth-cluster-proxy-${process.pid}`;
  const proxyHttpPort = await freePort();
  const server = await startTestServer({
    deploySettleSeconds: 1,
    proxy: 'caddy',
    proxyImage: TEST_CADDY_IMAGE,
    proxyHttpPort,
    proxyHttpsPort: await freePort(),
    providers: { proxy: { caddy: { options: { serviceName: PROXY } } } },
  });
  t.teardown(() => server.destroy());
  t.teardown(() =>
    engineA
      .getService(PROXY)
      .remove()
      .catch(() => undefined),
  );
  // From here on every level is logged and each line kept (not printed): searched for tokens at the end.
  const logged: string[] = [];
  // cast: the kernel's logger is pino's, which keeps its destination under a symbol of its own
  const logger = server.kernel.container.cradle.logger as unknown as Record<symbol, { write(line: string): boolean }> & { level: string };
  const streamSym = Object.getOwnPropertySymbols(logger).find(s => s.description === 'pino.stream');
  if (!streamSym) throw new Error("pino's destination was not found on the logger");
  logger[streamSym]!.write = (line: string) => (logged.push(line), true);
  logger.level = 'trace';
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
    // Not in test/expected-skips: these machines' swarm advertises 127.0.0.1, so a swarm that does not fails here.
    const advertised = local.Swarm?.NodeAddr;
    if (!canRun(t, 'loopback-swarm', advertised?.startsWith('127.') ? undefined : `this machine's swarm advertises ${advertised}, not loopback: nothing to refuse`)) return;
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

  t.test('a workload placed on the worker answers through the proxy of its server (the walk of a new user)', async t => {
    const {
      body: { environment },
    } = await client.post('project.create', { name: 'on the worker' });
    const created = await client.post('application.create', { name: 'routed', environmentId: environment.environmentId, serverId: A });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const { applicationId, appName } = created.body as { applicationId: string; appName: string };
    // Gone even when a step below throws: a service left constrained to the worker would stop its drain below.
    t.teardown(() => client.post('application.delete', { applicationId }).catch(() => undefined));
    const site = 'mkdir -p /www && echo "routed from the worker" > /www/index.html && exec httpd -f -p 3000 -h /www';
    await client.post('application.update', { applicationId, command: 'sh', args: ['-c', site], stopGracePeriodSwarm: 1_000_000_000, placementSwarm: { Constraints: ['node.role==worker'] } });
    await client.post('application.saveDockerProvider', { applicationId, dockerImage: TEST_BASE_IMAGE });
    const done = await runFinished(client, 'application.deploy', { applicationId });
    t.equal(done.status, 'done', done.errorMessage ?? '');
    const tasks = (await engineA.listTasks({ filters: { service: [appName], 'desired-state': ['running'] } })) as { NodeID: string }[];
    t.same(
      tasks.map(task => task.NodeID),
      [workerNode],
      'its task runs on the worker',
    );
    let domain = await client.post('domain.create', { host: 'worker.test', applicationId, port: 3000 });
    if (domain.status === 503) {
      // The proxy could not start on the server, for the reason the answer gives: the domain is
      // saved, and the next change of the routes applies them all again, as the answer says.
      t.comment(`domain.create answered 503: ${domain.body.message}`);
      domain = await client.post('domain.create', { host: 'worker-again.test', applicationId, port: 3000 });
    }
    t.equal(domain.status, 200, JSON.stringify(domain.body));
    const nodeA = ((await engineA.info()) as { Swarm: { NodeID: string } }).Swarm.NodeID;
    const proxyTasks = (await engineA.listTasks({ filters: { service: [PROXY], 'desired-state': ['running'] } })) as { NodeID: string }[];
    t.same(
      proxyTasks.map(task => task.NodeID),
      [nodeA],
      'the proxy runs on the node of the engine Berth talks to (its files are bound from there), pinned on a swarm of several nodes',
    );
    const through = () =>
      new Promise<{ status: number; body: string } | undefined>(resolve => {
        const req = http.request({ host: a.address, port: proxyHttpPort, path: '/', headers: { Host: 'worker.test' }, timeout: 3000 }, res => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', c => (body += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('timeout', () => req.destroy());
        req.on('error', () => resolve(undefined));
        req.end();
      });
    const answer = await waitFor(
      "worker.test through the manager's proxy",
      async () => {
        const res = await through();
        return res?.status === 200 ? res : undefined;
      },
      { timeout: 60_000, interval: 250 },
    );
    t.equal(answer.body, 'routed from the worker\n', "the task on the worker answers, through the overlay network, by the proxy on the manager's address");
    t.equal((await client.post('application.delete', { applicationId })).status, 200);
    await waitFor('the service gone', async () => ((await engineA.listServices({ filters: { name: [appName] } })).length ? undefined : true), { timeout: 30_000, interval: 250 });
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

  t.test('a workload with a volume mount on a multi-node swarm is pinned to its node, in placementSwarm, and the deploy log says so', async t => {
    const {
      body: { environment },
    } = await client.post('project.create', { name: 'pinned' });
    const created = await client.post('application.create', { name: 'keeper', environmentId: environment.environmentId, serverId: A });
    t.equal(created.status, 200, JSON.stringify(created.body));
    const { applicationId, appName } = created.body as { applicationId: string; appName: string };
    await client.post('application.saveDockerProvider', { applicationId, dockerImage: TEST_BASE_IMAGE });
    // sleep as PID 1 ignores SIGTERM: each redeploy would wait the default 10 s for the old task before killing it.
    await client.post('application.update', { applicationId, command: 'sleep', args: ['3600'], stopGracePeriodSwarm: 1_000_000_000 });
    t.equal((await client.post('mounts.create', { serviceId: applicationId, type: 'volume', volumeName: `keeper-data-${process.pid}`, mountPath: '/data' })).status, 200);
    const nodeA = ((await engineA.info()) as { Swarm: { NodeID: string } }).Swarm.NodeID;
    const nodes = (await engineA.listNodes()).length;
    t.ok(nodes >= 2, `a swarm of ${nodes} nodes`);

    const done = await runFinished(client, 'application.deploy', { applicationId });
    const log = String((await client.get('deployment.readLogs', { deploymentId: done.deploymentId })).body);
    t.equal(done.status, 'done', `${done.errorMessage ?? ''}\n${log}`);
    t.match(log, `Pinned ${appName} to node ${a.name} (node.id == ${nodeA}, written into its placementSwarm)`, 'the deploy log says where and why');
    t.match(log, `its mounts (volume keeper-data-${process.pid}) live on that one`);
    const one = await client.get('application.one', { applicationId });
    t.same(one.body.placementSwarm?.Constraints, [`node.id == ${nodeA}`], 'the pin is in placementSwarm, for the user to see and change');
    const spec = (await engineA.getService(appName).inspect()) as { Spec: { TaskTemplate: { Placement?: { Constraints?: string[] } } } };
    t.same(
      spec.Spec.TaskTemplate.Placement?.Constraints,
      [`node.labels.berth.org.${organizationId}==true`, `node.id == ${nodeA}`],
      "the service carries it, after its organization's placement constraint",
    );
    const tasks = (await engineA.listTasks({ filters: { service: [appName], 'desired-state': ['running'] } })) as { NodeID: string }[];
    t.same(
      tasks.map(task => task.NodeID),
      [nodeA],
      'its task runs on that node',
    );

    const again = await runFinished(client, 'application.deploy', { applicationId });
    const log2 = String((await client.get('deployment.readLogs', { deploymentId: again.deploymentId })).body);
    t.equal(again.status, 'done', log2);
    t.notMatch(log2, /Pinned/, 'a second deploy keeps the pin it has');
    t.same((await client.get('application.one', { applicationId })).body.placementSwarm?.Constraints, [`node.id == ${nodeA}`], 'once');

    const moved = await client.post('application.update', { applicationId, placementSwarm: { Constraints: [`node.hostname == ${a.name}`] } });
    t.equal(moved.status, 200, JSON.stringify(moved.body));
    const third = await runFinished(client, 'application.deploy', { applicationId });
    const log3 = String((await client.get('deployment.readLogs', { deploymentId: third.deploymentId })).body);
    t.notMatch(log3, /Pinned/, "a placement naming a node is the user's: kept as it is");
    t.same((await client.get('application.one', { applicationId })).body.placementSwarm?.Constraints, [`node.hostname == ${a.name}`]);
    answers.push(log, log2, log3); // deployment logs, searched for tokens with the answers
    t.equal((await client.post('application.delete', { applicationId })).status, 200);
  });

  t.test("another organization's server is 404 on every operation (403 where it would join this machine's swarm)", async t => {
    const other = await otherOrganization(server, userId);
    const ops: [string, Record<string, unknown>, 'get' | 'post', number?][] = [
      ['swarm.getNodes', { serverId: A }, 'get'],
      ['swarm.getNodeInfo', { serverId: A, nodeId: 'abc' }, 'get'],
      ['swarm.getNodeApps', { serverId: A }, 'get'],
      ['cluster.getNodes', { serverId: A }, 'get'],
      ['cluster.addWorker', { serverId: A }, 'get'],
      ['cluster.addManager', { serverId: A }, 'get'],
      // Joining this machine's swarm is the instance operators' alone: refused by the scope before any record is read.
      ['cluster.joinServer', { serverId: B, managerServerId: null, role: 'worker' }, 'post', 403],
      ['cluster.joinServer', { serverId: B, managerServerId: A, role: 'worker' }, 'post'],
      ['cluster.joinServer', { serverId: 'none', managerServerId: A, role: 'worker' }, 'post'],
      ['cluster.removeWorker', { serverId: A, nodeId: 'abc' }, 'post'],
    ];
    for (const [op, input, kind, status = 404] of ops) {
      const res = kind === 'get' ? await other.client.get(op, input) : await other.client.post(op, input);
      answers.push(JSON.stringify(res.body));
      t.equal(res.status, status, `${op} ${JSON.stringify(input)}`);
    }
  });

  t.test("this machine's swarm is the instance operators': another organization's owner neither removes its nodes nor joins it, in either role", async t => {
    // The owner of an organization of its own (not the instance's, which the first admin made).
    const stranger = await addMember(server, client, 'second-admin@example.com', 'admin');
    const theirs = await otherOrganization(server, stranger.userId);
    const local = ((await new Docker().info()) as { Swarm: { NodeID: string } }).Swarm.NodeID;
    const refused = await theirs.client.post('cluster.removeWorker', { nodeId: local });
    answers.push(JSON.stringify(refused.body));
    t.equal(refused.status, 403, JSON.stringify(refused.body));
    t.match(refused.body.message, /^Without serverId this acts on Berth's own machine, which only the instance's operators/);
    const operators = await call('cluster.removeWorker', { nodeId: local }, 'post');
    t.equal(operators.status, 409, "an instance operator passes the scope (and meets the engine's own rule: a manager is not removed)");
    t.match(operators.body.message, /is a manager/);
    for (const role of ['manager', 'worker']) {
      const join = await theirs.client.post('cluster.joinServer', { serverId: C, managerServerId: null, role });
      answers.push(JSON.stringify(join.body));
      t.equal(join.status, 403, `${role}: ${JSON.stringify(join.body)}`);
      t.match(join.body.message, /^Without managerServerId this acts on Berth's own machine/);
    }
    t.equal((await inHost(c, ['docker', 'info', '--format', '{{.Swarm.ControlAvailable}}'])).stdout.trim(), 'true', 'the server was not touched');
  });

  t.test('no answer carried a join token', async t => {
    await readTokens();
    t.ok(tokens.size >= 4, `${tokens.size} tokens seen`);
    const all = answers.join('\n');
    t.ok(answers.length > 20, `${answers.length} answers searched`);
    for (const token of tokens) t.notOk(all.includes(token), 'a token is absent');
    t.notOk(/SWMTKN-/.test(all), 'nothing shaped like one either');
    const log = logged.join('');
    t.ok(logged.length > 50, `${logged.length} lines of Berth's own log (trace level) searched`);
    t.match(log, /server joined the swarm/, 'the joins are in it');
    for (const token of tokens) t.notOk(log.includes(token), "a token is absent from Berth's log");
    t.notOk(/SWMTKN-/.test(log), 'nothing shaped like one either');
  });
}
