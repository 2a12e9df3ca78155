// Workloads join the user networks they name by id (networkIds; compose's serviceNetworks), on the
// real engine: an application's service is attached to its organization's overlay network, and a
// second application that left the organization's network (detachDokployNetwork) reaches the first
// through it, by its swarm name, with a real request; another organization's network id and a
// bridge network are refused when saved, naming the field; a network gone from the host fails the
// deploy with that message while the previous task keeps running; a docker-compose service joins
// a bridge network as an external network of the file Berth writes. Everything made here goes.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import t from 'tap';
import Docker from 'dockerode';
import { otherOrganization, runFinished, signUpAdmin, startTestServer, TEST_BASE_IMAGE, type Client, type Reply } from '@berth/core/testing';

t.setTimeout(300_000);

const docker = new Docker();
const PREFIX = `bnj-${process.pid}-${randomBytes(3).toString('hex')}`;
const ok = (r: Reply, what: string) => {
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
};
const issuePaths = (r: Reply) => ((r.body?.issues ?? []) as { path: (string | number)[] }[]).map(i => i.path.join('.'));

const server = await startTestServer({ proxy: 'none', deploySettleSeconds: 1 });
t.teardown(() => server.destroy());
const admin = await signUpAdmin(server);
const a = admin.client;
const stranger = ok(await a.post('user.createUserWithCredentials', { email: 'joiner@example.com', password: 'joiner-password-1', role: 'member' }), 'user') as { userId: string };
// B: an organization that is not the instance operators' (its workloads are on berth-org-*, not the platform network).
const b = (await otherOrganization(server, stranger.userId)).client;
const cleanup: (() => Promise<unknown>)[] = [];
t.teardown(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  const left = (await docker.listNetworks({ filters: { name: [PREFIX] } })) as { Name: string; Id: string }[];
  for (const n of left.filter(n => n.Name.startsWith(PREFIX)))
    await docker
      .getNetwork(n.Id)
      .remove()
      .catch(() => undefined);
});

const network = async (client: Client, what: string, body: Record<string, unknown>) =>
  ok(await client.post('network.create', { name: `${PREFIX}-${what}`, ...body }), 'network.create') as { networkId: string; name: string };
const environmentId = (ok(await b.post('project.create', { name: 'joining' }), 'project.create') as { environment: { environmentId: string } }).environment.environmentId;
const app = async (name: string, fields: Record<string, unknown>) => {
  const made = ok(await b.post('application.create', { name, environmentId }), 'application.create') as { applicationId: string; appName: string };
  cleanup.push(() => b.post('application.delete', { applicationId: made.applicationId }));
  ok(await b.post('application.saveDockerProvider', { applicationId: made.applicationId, dockerImage: TEST_BASE_IMAGE }), 'saveDockerProvider');
  ok(await b.post('application.update', { applicationId: made.applicationId, stopGracePeriodSwarm: 1_000_000_000, ...fields }), 'application.update');
  return made;
};
/** The running container of a swarm service on this engine. */
const taskContainer = async (service: string) => {
  const [found] = await docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${service}`], status: ['running'] } });
  if (!found) throw new Error(`no running container of ${service}`);
  return found;
};

const own = await network(b, 'own', { driver: 'overlay', attachable: true });
const lan = await network(b, 'lan', {});
const foreign = await network(a, 'foreign', { driver: 'overlay', attachable: true });

t.test('networkIds: an application joins its organization’s network; another reaches it there by name', async t => {
  const web = await app('web', { command: 'httpd', args: ['-f', '-p', '8080', '-h', '/etc'], networkIds: [own.networkId] });
  const done = await runFinished(b, 'application.deploy', { applicationId: web.applicationId });
  t.equal(done.status, 'done', `deploy: ${done.errorMessage ?? ''}`);
  const id = (await docker.getNetwork(own.name).inspect()).Id as string;
  const spec = (await docker.getService(web.appName).inspect()) as { Spec: { TaskTemplate: { Networks?: { Target: string }[] } } };
  t.ok(
    (spec.Spec.TaskTemplate.Networks ?? []).some(n => n.Target === id || n.Target === own.name),
    "the service's NetworkAttachmentConfigs name the network",
  );
  t.ok(Object.keys((await taskContainer(web.appName)).NetworkSettings.Networks).includes(own.name), 'its container is on it');

  // Off the organization's network: what it reaches, it reaches on the user network only.
  const client = await app('client', { command: 'sleep', args: ['3600'], networkIds: [own.networkId], detachDokployNetwork: true });
  const joined = await runFinished(b, 'application.deploy', { applicationId: client.applicationId });
  t.equal(joined.status, 'done', `deploy: ${joined.errorMessage ?? ''}`);
  const container = await taskContainer(client.appName);
  t.same(Object.keys(container.NetworkSettings.Networks), [own.name], 'the second is on the user network alone (detachDokployNetwork)');
  // tasks.<name>: the tasks' own addresses (a service's VIP needs IPVS, which these machines lack). No -T: this busybox's wget crashes with it; the exec's timeout bounds it.
  const { stdout } = await promisify(execFile)('docker', ['exec', container.Id, 'wget', '-q', '-O', '-', `http://tasks.${web.appName}:8080/hostname`], { timeout: 15_000 });
  t.equal(stdout.trim(), (await taskContainer(web.appName)).Id.slice(0, 12), "a real request reaches the first by its name, answered with its container's hostname");

  // Gone from the host (removed by hand): the deploy fails naming the field and the id; what ran keeps running.
  const gone = await network(b, 'gone', { driver: 'overlay' });
  ok(await b.post('application.update', { applicationId: web.applicationId, networkIds: [own.networkId, gone.networkId] }), 'update');
  await docker.getNetwork(gone.name).remove();
  const before = (await taskContainer(web.appName)).Id;
  const failed = await runFinished(b, 'application.deploy', { applicationId: web.applicationId });
  t.equal(failed.status, 'error', 'the deploy fails');
  t.match(failed.errorMessage, new RegExp(`networkIds\\.1: the network ${gone.name} \\(${gone.networkId}\\) is gone from this machine`));
  t.equal((await taskContainer(web.appName)).Id, before, 'the previous task keeps running');
});

t.test('networkIds: refused when saved — another organization’s id (404), a bridge network (400), naming the field', async t => {
  const db = ok(await b.post('redis.create', { name: 'cache', environmentId, databasePassword: 'redis-password-1' }), 'redis.create') as { redisId: string };
  cleanup.push(() => b.post('redis.remove', { redisId: db.redisId }));
  const web = ok(await b.post('application.create', { name: 'refused', environmentId }), 'application.create') as { applicationId: string };
  cleanup.push(() => b.post('application.delete', { applicationId: web.applicationId }));
  for (const [op, id] of [
    ['application.update', { applicationId: web.applicationId }],
    ['redis.update', { redisId: db.redisId }],
  ] as const) {
    const theirs = await b.post(op, { ...id, networkIds: [own.networkId, foreign.networkId] });
    t.equal(theirs.status, 404, `${op}: another organization's network`);
    t.same(issuePaths(theirs), ['networkIds.1']);
    t.notOk(JSON.stringify(theirs.body).includes(foreign.name), 'its name is not told');
    const bridge = await b.post(op, { ...id, networkIds: [lan.networkId] });
    t.equal(bridge.status, 400, `${op}: a bridge`);
    t.match(bridge.body.message, /networkIds\.0: .*bridge network, which a swarm service cannot join/);
  }
  const saved = ok(await b.post('redis.update', { redisId: db.redisId, networkIds: [own.networkId] }), 'redis.update');
  t.ok(saved, 'its own overlay is taken');
  t.same((ok(await b.get('redis.one', { redisId: db.redisId }), 'redis.one') as { networkIds: string[] }).networkIds, [own.networkId]);
});

t.test('serviceNetworks: a docker-compose service joins a bridge network of its organization', async t => {
  const file =
    'services:\n  web:\n    image: berth-test/busybox:1\n    command: ["sleep", "3600"]\n    stop_grace_period: 1s\n  side:\n    image: berth-test/busybox:1\n    command: ["sleep", "3600"]\n    stop_grace_period: 1s\n';
  const stack = ok(await b.post('compose.create', { name: 'joins', environmentId, composeType: 'docker-compose', composeFile: file }), 'compose.create') as { composeId: string };
  cleanup.push(() => b.post('compose.delete', { composeId: stack.composeId, deleteVolumes: true }));
  const theirs = await b.post('compose.update', { composeId: stack.composeId, serviceNetworks: [{ serviceName: 'web', networkIds: [foreign.networkId], detachDokployNetwork: false }] });
  t.equal(theirs.status, 404, "another organization's network is refused when saved");
  t.same(issuePaths(theirs), ['serviceNetworks.0.networkIds.0']);
  ok(await b.post('compose.update', { composeId: stack.composeId, serviceNetworks: [{ serviceName: 'web', networkIds: [lan.networkId], detachDokployNetwork: false }] }), 'compose.update');
  const done = await runFinished(b, 'compose.deploy', { composeId: stack.composeId });
  t.equal(done.status, 'done', `deploy: ${done.errorMessage ?? ''}`);
  const containers = await docker.listContainers({ filters: { label: [`berth.id=${stack.composeId}`], status: ['running'] } });
  const networksOf = (service: string) => Object.keys(containers.find(c => c.Labels['com.docker.compose.service'] === service)?.NetworkSettings.Networks ?? {});
  t.ok(networksOf('web').includes(lan.name), 'web is on the bridge network');
  t.ok(
    networksOf('web').some(n => n.endsWith('_default')),
    "and still on the file's default network",
  );
  t.notOk(networksOf('side').includes(lan.name), 'side, not named, is not');
  t.ok((await docker.getNetwork(lan.name).inspect()).Labels?.['berth.id'] === lan.networkId, 'the network is still the record’s (external: not made by the program)');
});
