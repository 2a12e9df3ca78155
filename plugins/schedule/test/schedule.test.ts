// schedule.* through the real kernel, PostgreSQL and Docker engine: an application running the
// test base image gets schedules whose commands run inside its container (runManually answers
// once the run ended, its log read back through deployment.*), a failing run emits
// scheduleFailed, the durable tick runs a schedule on its cron and, across a restart of the
// server, keeps it scheduled with one catch-up run said in the log; a run going when Berth stops
// ends error (never left running). Server schedules run their script over SSH on a kit host (its
// own sshd), this machine's only for the instance operators and while hostAccess.hostSchedules
// allows them. Another organization's schedules are NOT_FOUND, and the records an input names
// must be the caller's organization's.
import t from 'tap';
import type { BerthEvents } from '@berth/core';
import { addMember, canRun, Client, otherOrganization, runFinished, signUpAdmin, sleep, startTestServer, TEST_BASE_IMAGE, waitFor, type TestServer } from '@berth/core/testing';
import { remoteHostsMissing, sharedRemoteHosts } from '@berth/test/remote-hosts';

t.setTimeout(600_000);

let server: TestServer = await startTestServer({ proxy: 'none', scheduleTickSeconds: 1, deploySettleSeconds: 1 } as never); // cast: the schedule and workloads plugins' own keys
t.teardown(() => server.destroy());
const admin = await signUpAdmin(server);
let client = admin.client;
const member = await addMember(server, client, 'member@example.com');
const other = await otherOrganization(server, admin.userId);
let asMember = member.client;
let asOther = other.client;
/** The clients, on the restarted server's address. */
const reconnect = () => {
  const again = (c: Client) => new Client(server.url, c.apiKey ? { apiKey: c.apiKey } : { token: c.token! });
  [client, asMember, asOther] = [again(client), again(asMember), again(asOther)];
};

/** The scheduleFailed events heard on the current kernel's bus. */
const failed: BerthEvents['scheduleFailed'][] = [];
const listen = (s: TestServer) => s.kernel.container.cradle.events.on('scheduleFailed', p => void failed.push(p));
listen(server);

const ok = async <T = any>(what: string, reply: Promise<{ status: number; body: any }>): Promise<T> => {
  const r = await reply;
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as T;
};

// An application running the test base image: busybox's sleep keeps its container up.
const { environment } = await ok('project.create', client.post('project.create', { name: 'Cron' }));
const app = await ok('application.create', client.post('application.create', { name: 'worker', environmentId: environment.environmentId }));
const applicationId = app.applicationId as string;
await ok('application.update', client.post('application.update', { applicationId, command: 'sleep', args: ['3600'], stopGracePeriodSwarm: 1_000_000_000 }));
await ok('application.saveDockerProvider', client.post('application.saveDockerProvider', { applicationId, dockerImage: TEST_BASE_IMAGE }));
const deployed = await runFinished(client, 'application.deploy', { applicationId });
if (deployed.state !== 'done') throw new Error(`application.deploy: ${deployed.state} ${deployed.errorMessage}`);
t.teardown(() => client.post('application.delete', { applicationId }).catch(() => undefined));

const base = { name: 'nightly', cronExpression: '0 3 * * *', shellType: 'sh', scheduleType: 'application', applicationId, enabled: false };
const logOf = async (deploymentId: string) => ok<string>('deployment.readLogs', client.get('deployment.readLogs', { deploymentId, tail: 200 }));

t.test("create, one and list answer the peer's shapes", async t => {
  const created = await client.post('schedule.create', { ...base, command: 'echo hi', description: 'say hi', timezone: 'Europe/Paris', serviceName: '' });
  t.equal(created.status, 200, JSON.stringify(created.body));
  t.match(created.body, {
    scheduleId: String,
    name: 'nightly',
    description: 'say hi',
    cronExpression: '0 3 * * *',
    appName: /^schedule-nightly/,
    serviceName: null,
    shellType: 'sh',
    scheduleType: 'application',
    command: 'echo hi',
    script: null,
    applicationId,
    composeId: null,
    serverId: null,
    organizationId: admin.organizationId,
    enabled: false,
    timezone: 'Europe/Paris',
    createdAt: String,
  });
  const { scheduleId } = created.body;
  const one = await ok('schedule.one', client.get('schedule.one', { scheduleId }));
  t.match(one, {
    scheduleId,
    application: { applicationId, appName: app.appName, name: 'worker', serverId: null, environment: { environmentId: environment.environmentId, project: { name: 'Cron' } } },
    compose: null,
    server: null,
  });
  const list = await ok<any[]>('schedule.list', client.get('schedule.list', { id: applicationId, scheduleType: 'application' }));
  t.same(
    list.map(s => s.scheduleId),
    [scheduleId],
  );
  t.match(list[0], { application: { applicationId, appName: app.appName }, compose: null, server: null, deployments: [] });
  t.same(await ok('schedule.list', client.get('schedule.list', { id: 'anything', scheduleType: 'dokploy-server' })), [], "the organization's schedules on this machine: none");

  const updated = await client.post('schedule.update', { scheduleId, name: 'nightly', cronExpression: '30 4 * * 1-5', command: 'echo bye', timezone: null });
  t.equal(updated.status, 200, JSON.stringify(updated.body));
  t.match(updated.body, { cronExpression: '30 4 * * 1-5', command: 'echo bye', timezone: null, shellType: 'sh', description: 'say hi', applicationId, enabled: false });
  t.equal((await client.post('schedule.delete', { scheduleId })).body, true);
  t.equal((await client.get('schedule.one', { scheduleId })).status, 404, 'gone');
});

t.test('inputs are checked', async t => {
  const cron = await client.post('schedule.create', { ...base, command: 'true', cronExpression: 'every day' });
  t.equal(cron.status, 400);
  t.match(cron.body.issues, [{ path: ['cronExpression'] }]);
  t.equal((await client.post('schedule.create', { ...base, command: 'true', cronExpression: '0 3 * * * * *' })).status, 400, 'seven fields');
  const tz = await client.post('schedule.create', { ...base, command: 'true', timezone: 'Mars/Olympus' });
  t.equal(tz.status, 400);
  t.match(tz.body.issues, [{ path: ['timezone'] }]);
  const noApp = await client.post('schedule.create', { name: 'x', cronExpression: '0 3 * * *', command: 'true' });
  t.equal(noApp.status, 400, 'an application schedule without its application');
  t.match(noApp.body.issues, [{ path: ['applicationId'] }]);
  t.equal((await client.post('schedule.create', { ...base, command: 'x'.repeat(16385) })).status, 400, 'the command has a maximum length');
  t.equal((await client.post('schedule.create', { ...base, command: 'true', name: 'n'.repeat(256) })).status, 400, 'so has the name');
  // No scheduleType: the id field given says which.
  const inferred = await ok('schedule.create', client.post('schedule.create', { name: 'inferred', cronExpression: '0 3 * * *', command: 'true', applicationId }));
  t.equal(inferred.scheduleType, 'application');
  await client.post('schedule.delete', { scheduleId: inferred.scheduleId });
});

t.test('runManually runs the command inside the container and answers once it ended; its log is read back', async t => {
  const made = await ok('schedule.create', client.post('schedule.create', { ...base, name: 'hello', command: 'echo "hello from $(hostname)"; echo "to stderr" >&2; printf "no newline"' }));
  const run = await client.post('schedule.runManually', { scheduleId: made.scheduleId });
  t.equal(run.status, 200, JSON.stringify(run.body));
  t.match(run.body, { status: 'done', deploymentId: String, logPath: String });
  const log = await logOf(run.body.deploymentId);
  t.match(log, /Running the command with sh in container /, 'the log says where it ran');
  t.match(log, /hello from [0-9a-f]{12}/, "the command's output, from inside the container (its hostname)");
  t.match(log, /to stderr/, 'its standard error too');
  t.match(log, /no newline/, 'and a last line without its newline');
  const runs = await ok<any[]>('deployment.allByType', client.get('deployment.allByType', { id: made.scheduleId, type: 'schedule' }));
  t.match(runs, [{ deploymentId: run.body.deploymentId, scheduleId: made.scheduleId, status: 'done', action: 'manual', title: 'Schedule' }], 'a deployment of the schedule');
  const listed = await ok<any[]>('schedule.list', client.get('schedule.list', { id: applicationId, scheduleType: 'application' }));
  t.match(listed.find(s => s.scheduleId === made.scheduleId).deployments, [{ deploymentId: run.body.deploymentId }], 'list answers its runs');
  await client.post('schedule.delete', { scheduleId: made.scheduleId });
  t.equal((await client.get('deployment.one', { deploymentId: run.body.deploymentId })).status, 404, 'a deleted schedule takes its runs');
});

t.test('a failing run answers error and emits scheduleFailed', async t => {
  const made = await ok('schedule.create', client.post('schedule.create', { ...base, name: 'doomed', command: 'echo about to fail; exit 3' }));
  failed.length = 0;
  const run = await ok('schedule.runManually', client.post('schedule.runManually', { scheduleId: made.scheduleId }));
  t.equal(run.status, 'error');
  const record = await ok('deployment.one', client.get('deployment.one', { deploymentId: run.deploymentId }));
  t.match(record, { state: 'error', errorMessage: 'The command exited with 3' });
  t.match(await logOf(run.deploymentId), /about to fail/);
  const heard = await waitFor('scheduleFailed', () => failed.find(e => e.scheduleId === made.scheduleId));
  t.match(heard, { organizationId: admin.organizationId, name: 'doomed', error: 'The command exited with 3', at: String });

  const bash = await ok('schedule.create', client.post('schedule.create', { ...base, name: 'no bash', shellType: 'bash', command: 'true' }));
  const noShell = await ok('schedule.runManually', client.post('schedule.runManually', { scheduleId: bash.scheduleId }));
  t.equal(noShell.status, 'error', "bash is not in the base image's container");
  t.match((await client.get('deployment.one', { deploymentId: noShell.deploymentId })).body.errorMessage, /exited with 12[67] \(is bash in the container\?/);
  for (const id of [made.scheduleId, bash.scheduleId]) await client.post('schedule.delete', { scheduleId: id });
});

t.test("a compose schedule runs in its service's container (serviceName)", async t => {
  const file = ['services:', ...['web', 'worker'].flatMap(s => [`  ${s}:`, `    image: ${TEST_BASE_IMAGE}`, `    hostname: ${s}-box`, '    command: ["sleep", "3600"]'])].join('\n') + '\n';
  const stack = await ok('compose.create', client.post('compose.create', { name: 'pair', environmentId: environment.environmentId, composeFile: file }));
  t.teardown(() => client.post('compose.delete', { composeId: stack.composeId, deleteVolumes: true }).catch(() => undefined));
  const up = await runFinished(client, 'compose.deploy', { composeId: stack.composeId });
  t.equal(up.state, 'done', up.errorMessage ?? '');
  const made = await ok(
    'schedule.create',
    client.post('schedule.create', { name: 'which box', cronExpression: '0 3 * * *', shellType: 'sh', command: 'hostname', composeId: stack.composeId, serviceName: 'worker', enabled: false }),
  );
  t.match(made, { scheduleType: 'compose', composeId: stack.composeId, applicationId: null, serviceName: 'worker' });
  const run = await ok('schedule.runManually', client.post('schedule.runManually', { scheduleId: made.scheduleId }));
  t.equal(run.status, 'done');
  const log = await logOf(run.deploymentId);
  t.match(log, /^worker-box$/m, "the command ran in the worker's container");
  t.match(log, /\(service worker\)/);
  t.match((await ok('schedule.one', client.get('schedule.one', { scheduleId: made.scheduleId }))).compose, {
    composeId: stack.composeId,
    appName: stack.appName,
    name: 'pair',
    environment: { environmentId: environment.environmentId },
  });
  const none = await ok('schedule.update', client.post('schedule.update', { scheduleId: made.scheduleId, name: 'which box', cronExpression: '0 3 * * *', command: 'hostname', serviceName: 'db' }));
  t.equal(none.serviceName, 'db');
  const missing = await ok('schedule.runManually', client.post('schedule.runManually', { scheduleId: made.scheduleId }));
  t.equal(missing.status, 'error', 'no such service runs');
  t.match((await client.get('deployment.one', { deploymentId: missing.deploymentId })).body.errorMessage, /No container of .* \(service db\) is running on this machine: deploy or start it first/);
  t.equal((await client.post('compose.delete', { composeId: stack.composeId, deleteVolumes: true })).status, 200);
  t.equal((await client.get('schedule.one', { scheduleId: made.scheduleId })).status, 404, 'a removed stack takes its schedules');
});

t.test("another organization's schedules and records are out of reach", async t => {
  const mine = await ok('schedule.create', client.post('schedule.create', { ...base, name: 'private', command: 'true' }));
  const b = asOther;
  for (const [op, input] of [
    ['schedule.one', { scheduleId: mine.scheduleId }],
    ['schedule.runManually', { scheduleId: mine.scheduleId }],
    ['schedule.delete', { scheduleId: mine.scheduleId }],
    ['schedule.update', { scheduleId: mine.scheduleId, name: 'taken', cronExpression: '* * * * *', command: 'true' }],
    ['schedule.list', { id: applicationId, scheduleType: 'application' }],
    ['schedule.create', { ...base, command: 'true' }],
  ] as const) {
    const r = op === 'schedule.one' || op === 'schedule.list' ? await b.get(op, input) : await b.post(op, input);
    t.equal(r.status, 404, `${op}: ${JSON.stringify(r.body)}`);
    t.notOk(JSON.stringify(r.body).includes('private'), 'nothing of it answered');
  }
  t.same((await b.get('deployment.allByType', { id: mine.scheduleId, type: 'schedule' })).body, [], 'nor its runs');
  // B's own schedule naming A's application in another field: refused too.
  const { environment: theirs } = await ok('project.create', b.post('project.create', { name: 'B' }));
  const bApp = await ok('application.create', b.post('application.create', { name: 'b-app', environmentId: theirs.environmentId }));
  t.equal((await b.post('schedule.create', { ...base, applicationId: bApp.applicationId, composeId: null, serverId: 'not-theirs', command: 'true' })).status, 404, "a serverId not of B's");
  const bSchedule = await ok('schedule.create', b.post('schedule.create', { ...base, applicationId: bApp.applicationId, command: 'true' }));
  const moved = await b.post('schedule.update', { scheduleId: bSchedule.scheduleId, name: 'x', cronExpression: '* * * * *', command: 'true', applicationId });
  t.equal(moved.status, 404, "B's schedule cannot be moved to A's application");
  t.match(await ok('schedule.one', client.get('schedule.one', { scheduleId: mine.scheduleId })), { name: 'private', command: 'true' }, "A's schedule is as it was");
  await client.post('schedule.delete', { scheduleId: mine.scheduleId });
});

t.test('host schedules: owners and admins only; this machine only for the instance operators, when host access allows it', async t => {
  const { config } = server.kernel.container.cradle;
  const thisMachine = { name: 'on berth', cronExpression: '0 3 * * *', command: '', script: 'echo "on this machine: $0"', shellType: 'sh', scheduleType: 'dokploy-server', enabled: false };
  const off = await client.post('schedule.create', thisMachine);
  t.equal(off.status, 403);
  t.match(off.body.message, /scheduleType: .*hostAccess\.hostSchedules/, 'the refusal names the key that allows it');
  config.hostAccess.hostSchedules = true;
  t.teardown(() => {
    config.hostAccess.hostSchedules = false;
  });
  const made = await ok('schedule.create', client.post('schedule.create', thisMachine));
  t.match(made, { scheduleType: 'dokploy-server', applicationId: null, serverId: null, organizationId: admin.organizationId });
  const run = await ok('schedule.runManually', client.post('schedule.runManually', { scheduleId: made.scheduleId }));
  t.equal(run.status, 'done');
  t.match(await logOf(run.deploymentId), /on this machine: sh/);
  t.same(
    (await ok<any[]>('schedule.list', client.get('schedule.list', { id: '', scheduleType: 'dokploy-server' }))).map(s => s.scheduleId),
    [made.scheduleId],
  );
  const notOperator = await asOther.post('schedule.create', thisMachine);
  t.equal(notOperator.status, 403, "another organization's owner is no instance operator");
  t.match(notOperator.body.message, /only the instance's operators/);
  const byMember = await asMember.post('schedule.create', thisMachine);
  t.equal(byMember.status, 403, 'nor is a member');
  t.equal((await asMember.get('schedule.one', { scheduleId: made.scheduleId })).status, 403, 'a member does not read a host schedule');
  config.hostAccess.hostSchedules = false;
  const later = await client.post('schedule.runManually', { scheduleId: made.scheduleId });
  t.equal(later.status, 403, 'once the policy is off, it no longer runs');
  t.match(later.body.message, /hostAccess\.hostSchedules/);
  t.equal((await client.post('schedule.delete', { scheduleId: made.scheduleId })).status, 200, 'but the operators may still delete it');
});

t.test('the tick runs a schedule on its cron; across a restart it stays scheduled, with one catch-up run said in the log', async t => {
  const made = await ok('schedule.create', client.post('schedule.create', { ...base, name: 'every 3 s', cronExpression: '*/3 * * * * *', command: 'echo tick', enabled: true }));
  const runsOf = async () => ok<any[]>('deployment.allByType', client.get('deployment.allByType', { id: made.scheduleId, type: 'schedule' }));
  const first = await waitFor('a scheduled run done', async () => (await runsOf()).find(d => d.action === 'scheduled' && d.status === 'done'), { timeout: 60_000 });
  t.match(await logOf(first.deploymentId), /tick/);
  t.notOk(
    (await runsOf()).some(d => d.action === 'catchUp'),
    'no catch-up while Berth runs',
  );

  await server.stop();
  // Several of its times pass while Berth is not running (more than two ticks and ten seconds ago by the first tick after the start).
  await sleep(15_000);
  server = await server.restart();
  listen(server);
  reconnect();
  const catchUp = await waitFor('the catch-up run', async () => (await runsOf()).find(d => d.action === 'catchUp' && d.status !== 'running'), { timeout: 60_000 });
  t.equal(catchUp.status, 'done');
  t.match(await logOf(catchUp.deploymentId), /Catch-up run: \d+ scheduled time\(s\) passed without a run \(Berth was not running\)[^\n]*this one run makes up for them/);
  await waitFor(
    'scheduled runs again after the catch-up',
    async () => (await runsOf()).some(d => d.action === 'scheduled' && new Date(d.createdAt) > new Date(catchUp.createdAt) && d.status === 'done'),
    { timeout: 60_000 },
  );
  t.equal((await runsOf()).filter(d => d.action === 'catchUp').length, 1, 'one catch-up run');
  await ok('schedule.update', client.post('schedule.update', { scheduleId: made.scheduleId, name: 'every 3 s', cronExpression: '*/3 * * * * *', command: 'echo tick', enabled: false }));
  await client.post('schedule.delete', { scheduleId: made.scheduleId });
});

t.test('a run going when Berth stops ends error with the reason, never stays running', async t => {
  const made = await ok('schedule.create', client.post('schedule.create', { ...base, name: 'long', command: 'echo started; sleep 30' }));
  failed.length = 0;
  void client.post('schedule.runManually', { scheduleId: made.scheduleId }).catch(() => undefined);
  const running = await waitFor('the run going', async () => (await ok<any[]>('runs', client.get('deployment.allByType', { id: made.scheduleId, type: 'schedule' }))).find(d => d.state === 'running'));
  await waitFor('its first line', async () => /started/.test(await logOf(running.deploymentId)));
  server = await server.restart();
  listen(server);
  reconnect();
  const ended = await ok('deployment.one', client.get('deployment.one', { deploymentId: running.deploymentId }));
  t.match(ended, { state: 'error', errorMessage: /Berth stopped while this deployment was running/ });
  t.ok(
    failed.some(e => e.scheduleId === made.scheduleId),
    'scheduleFailed was emitted',
  );
  await client.post('schedule.delete', { scheduleId: made.scheduleId });
});

t.test('server schedules run their script over SSH on a server of the organization', async t => {
  if (!canRun(t, 'remote-hosts', remoteHostsMissing())) return;
  const [host] = (await sharedRemoteHosts(1)).hosts;
  const key = await ok('sshKey.create', client.post('sshKey.create', { name: 'kit host', privateKey: host!.privateKey, publicKey: host!.publicKey }));
  const srv = await ok(
    'server.create',
    client.post('server.create', { name: 'kit host', ipAddress: host!.address, port: 22, username: host!.user, sshKeyId: key.sshKeyId, hostKeyFingerprint: host!.hostKeyFingerprint }),
  );
  const script = 'echo "on $(hostname) as $(id -un)"\necho "argument-safe: $1" ; exit 0';
  const made = await ok(
    'schedule.create',
    client.post('schedule.create', { name: 'remote', cronExpression: '0 3 * * *', command: '', script, shellType: 'bash', serverId: srv.serverId, enabled: false }),
  );
  t.match(made, { scheduleType: 'server', serverId: srv.serverId, applicationId: null, script });
  const run = await ok('schedule.runManually', client.post('schedule.runManually', { scheduleId: made.scheduleId }));
  t.equal(run.status, 'done');
  const log = await logOf(run.deploymentId);
  t.match(log, `on ${host!.name} as ${host!.user}`, 'the script ran on the server, as its login');
  t.match(log, /Running the script with bash on server /);
  t.match((await ok('schedule.one', client.get('schedule.one', { scheduleId: made.scheduleId }))).server, { serverId: srv.serverId, name: 'kit host' });
  t.same(
    (await ok<any[]>('schedule.list', client.get('schedule.list', { id: srv.serverId, scheduleType: 'server' }))).map(s => s.scheduleId),
    [made.scheduleId],
  );
  t.equal((await asMember.post('schedule.runManually', { scheduleId: made.scheduleId })).status, 403, 'a member does not run a server schedule');
  t.equal((await asOther.get('schedule.list', { id: srv.serverId, scheduleType: 'server' })).status, 404, "another organization does not list the server's");
  const failing = await ok(
    'schedule.update',
    client.post('schedule.update', { scheduleId: made.scheduleId, name: 'remote', cronExpression: '0 3 * * *', command: '', script: 'echo nope >&2; exit 5' }),
  );
  t.equal(failing.script, 'echo nope >&2; exit 5');
  failed.length = 0;
  const bad = await ok('schedule.runManually', client.post('schedule.runManually', { scheduleId: made.scheduleId }));
  t.equal(bad.status, 'error');
  t.match(await logOf(bad.deploymentId), /nope/);
  t.ok(
    failed.some(e => e.scheduleId === made.scheduleId && /exited with 5/.test(e.error)),
    'scheduleFailed',
  );
  t.equal((await client.post('server.remove', { serverId: srv.serverId })).status, 200);
  t.equal((await client.get('schedule.one', { scheduleId: made.scheduleId })).status, 404, 'a removed server takes its schedules');
});

t.test('a removed application takes its schedules', async t => {
  const made = await ok('schedule.create', client.post('schedule.create', { ...base, name: 'last', command: 'true' }));
  t.equal((await client.post('application.delete', { applicationId })).status, 200);
  t.equal((await client.get('schedule.one', { scheduleId: made.scheduleId })).status, 404);
});
