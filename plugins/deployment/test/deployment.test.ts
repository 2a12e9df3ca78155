// deployment.* and the `deployments` service through a real server, PostgreSQL and the job
// scheduler, with the fixture plugin's "schedule" deployer doing the work.
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { signUpAdmin, otherOrganization, waitFor, Client } from '@berth/core/testing';
import { startServer, enqueue, waitForStatus, logText, events, gate, unique, settleOf } from './helpers.ts';

t.test('deployments', async t => {
  // The default hard timeout (30 min): a deployment here ends when its plan or the test ends it.
  const server = await startServer({ deploymentsKept: 3 });
  t.teardown(() => server.destroy());
  const { client, userId, organizationId } = await signUpAdmin(server);
  const other = await otherOrganization(server, userId);

  t.test('a deployment runs: queued, then done, its log redacted in the file and in readLogs', async t => {
    const target = unique('ok');
    const queued = await enqueue(client, target, { lines: ['cloning', 'token is s3cr3t-token here', 'sh0rt x'], secret: 's3cr3t-token', sleepMs: 50 });
    t.equal(queued.state, 'queued', 'enqueue answers the queued record');
    t.match(queued.logPath, new RegExp(`logs/deployments/${queued.deploymentId}\\.log$`));
    t.ok(queued.logPath.startsWith(server.dataDir), 'the log lives under the data directory');
    const done = await waitForStatus(client, queued.deploymentId, ['done', 'error']);
    t.match(done, {
      deploymentId: queued.deploymentId,
      status: 'done',
      state: 'done',
      action: 'deploy',
      targetType: 'schedule',
      targetId: target,
      organizationId,
      serverId: null,
      errorMessage: null,
      scheduleId: target,
      applicationId: null,
      isPreviewDeployment: false,
      startedAt: String,
      finishedAt: String,
    });
    t.ok(Date.parse(done.startedAt) >= Date.parse(done.createdAt) && Date.parse(done.finishedAt) >= Date.parse(done.startedAt), 'timestamps in order');
    const file = readFileSync(queued.logPath, 'utf8');
    t.equal(file, 'cloning\ntoken is ****** here\nsh0rt x\n', 'the secret is masked in the file');
    t.notMatch(file, 's3cr3t-token');
    const logs = await client.get('deployment.readLogs', { deploymentId: queued.deploymentId });
    t.equal(logs.status, 200);
    t.equal(logs.body, file, 'readLogs answers the redacted text');
    const tail = await client.get('deployment.readLogs', { deploymentId: queued.deploymentId, tail: 1 });
    t.equal(tail.body, 'sh0rt x\n', 'tail keeps the last lines');
    const trpc = await client.trpc('query', 'deployment.readLogs', { deploymentId: queued.deploymentId, tail: 2 });
    t.equal(trpc.body.result.data.json, 'token is ****** here\nsh0rt x\n', 'over tRPC too');
    const byType = await client.get('deployment.allByType', { id: target, type: 'schedule' });
    t.equal(byType.status, 200);
    t.same(
      byType.body.map((d: { deploymentId: string }) => d.deploymentId),
      [queued.deploymentId],
    );
    t.ok(
      events(server).some(e => e.event === 'end' && e.deploymentId === queued.deploymentId),
      'the deployer ran to its end',
    );
  });

  t.test('a deployer that throws: error, its message recorded and last in the log (redacted), the workload settled', async t => {
    const target = unique('fail');
    const d = await enqueue(client, target, { lines: ['building'], secret: 'hunter22', fail: 'build failed: password hunter22 rejected' });
    const failed = await waitForStatus(client, d.deploymentId, ['done', 'error', 'cancelled']);
    t.equal(failed.status, 'error');
    t.equal(failed.errorMessage, 'build failed: password ****** rejected');
    t.equal(readFileSync(d.logPath, 'utf8'), 'building\nbuild failed: password ****** rejected\n');
    const settle = await settleOf(server, target);
    t.match(settle, { outcome: 'error', reason: 'build failed: password ****** rejected' });
  });

  t.test('a deployment read as ended has its workload settled already (the end and the settle commit together)', async t => {
    const target = unique('slow-settle');
    const d = await enqueue(client, target, { fail: 'build failed' });
    const failed = await waitForStatus(client, d.deploymentId, ['done', 'error', 'cancelled']);
    t.equal(failed.status, 'error');
    // Read once, not awaited: the fixture's settle takes 500 ms, far longer than the poll above.
    t.match(
      events(server).find(e => e.event === 'settle' && e.targetId === target),
      { outcome: 'error', reason: 'build failed' },
      'settled before the end could be read',
    );
  });

  t.test("an error message with NUL bytes (as the engine's log frames carry) still ends the deployment: error, the message stored without them", async t => {
    const d = await enqueue(client, unique('nul'), { fail: 'pull failed:<NUL><NUL> bad frame<NUL>' });
    const failed = await waitForStatus(client, d.deploymentId, ['done', 'error', 'cancelled']);
    t.equal(failed.status, 'error', 'not left running');
    t.equal(failed.errorMessage, 'pull failed: bad frame');
  });

  t.test('a target type nobody deploys: error naming it', async t => {
    const target = unique('bk');
    const r = await client.post('deployFixture.enqueue', { targetType: 'backup', targetId: target });
    t.equal(r.status, 200);
    const failed = await waitForStatus(client, r.body.deploymentId, ['done', 'error']);
    t.equal(failed.status, 'error');
    t.match(failed.errorMessage, /No deployer runs "backup" deployments/);
    t.equal(failed.backupId, target);
  });

  t.test('one target: deployments run one at a time, in the order they were queued', async t => {
    const target = unique('fifo');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await enqueue(client, target, { sleepMs: 150 }, { action: `step${i}` })).deploymentId);
    for (const id of ids) await waitForStatus(client, id, ['done']);
    const seen = events(server).filter(e => e.targetId === target && (e.event === 'start' || e.event === 'end'));
    t.same(
      seen.map(e => `${e.event}:${ids.indexOf(e.deploymentId!)}`),
      ['start:0', 'end:0', 'start:1', 'end:1', 'start:2', 'end:2'],
      'never overlapping, FIFO',
    );
    t.same(
      seen.filter(e => e.event === 'start').map(e => e.action),
      ['step0', 'step1', 'step2'],
      'the deployer got each action',
    );
    const list = await client.get('deployment.allByType', { id: target, type: 'schedule' });
    t.same(
      list.body.map((d: { deploymentId: string }) => d.deploymentId),
      [...ids].reverse(),
      'listed newest first',
    );
  });

  t.test('concurrency 1 per host: two targets on the local host run one after the other', async t => {
    const [a, b] = [unique('ca'), unique('cb')];
    const da = await enqueue(client, a, { sleepMs: 300 });
    const db = await enqueue(client, b, { sleepMs: 300 });
    await waitForStatus(client, da.deploymentId, ['done']);
    await waitForStatus(client, db.deploymentId, ['done']);
    const ev = events(server);
    const endA = ev.find(e => e.event === 'end' && e.deploymentId === da.deploymentId)!;
    const startB = ev.find(e => e.event === 'start' && e.deploymentId === db.deploymentId)!;
    t.ok(startB.at >= endA.at, 'b starts only after a ended');
    // Another host has its own limit: a deployment there runs while a local one holds the local slot.
    const [c, d] = [unique('hc'), unique('hd')];
    const held = gate(server);
    const dc = await enqueue(client, c, { gate: held.file });
    await waitForStatus(client, dc.deploymentId, ['running']);
    const dd = await enqueue(client, d, {}, { serverId: 'remote-1' });
    t.equal((await waitForStatus(client, dd.deploymentId, ['done', 'error'])).status, 'done', "the remote host's deployment ran to its end");
    t.equal((await client.get('deployment.one', { deploymentId: dc.deploymentId })).body.state, 'running', 'alongside the local one, still running');
    held.open();
    await waitForStatus(client, dc.deploymentId, ['done']);
  });

  t.test('killProcess stops a running deployment (cancelled, settled) and a queued one; a finished one is a 400', async t => {
    const target = unique('kill');
    // A gate nobody opens: only the kill ends it.
    const running = await enqueue(client, target, { lines: ['long job'], gate: gate(server).file });
    const queued = await enqueue(client, target, { sleepMs: 10 });
    await waitFor('the deployer to start', () => logText(running.logPath).includes('long job'));
    const killed = await client.post('deployment.killProcess', { deploymentId: running.deploymentId });
    t.equal(killed.status, 200);
    t.match(
      killed.body,
      { deploymentId: running.deploymentId, status: 'error', state: 'cancelled', errorMessage: 'Deployment cancelled', finishedAt: String },
      "cancelled: the peer's error, with the cancellation as its message",
    );
    t.match(readFileSync(running.logPath, 'utf8'), /long job\nDeployment cancelled\n$/);
    t.match(await settleOf(server, target), { outcome: 'cancelled' });
    t.notOk(
      events(server).some(e => e.event === 'end' && e.deploymentId === running.deploymentId),
      'the deployer saw its signal and never finished',
    );
    // The queued one was not touched by killing the other: it runs now.
    await waitForStatus(client, queued.deploymentId, ['done']);
    const again = await client.post('deployment.killProcess', { deploymentId: running.deploymentId });
    t.equal(again.status, 400);
    t.match(again.body.message, /not running: it is cancelled/);

    const blocking = gate(server);
    const blocker = await enqueue(client, target, { gate: blocking.file });
    const waiting = await enqueue(client, target, { sleepMs: 10 });
    await waitForStatus(client, blocker.deploymentId, ['running']);
    t.match(
      (await client.get('deployment.one', { deploymentId: waiting.deploymentId })).body,
      { status: 'running', state: 'queued', startedAt: null },
      "a queued one answers the peer's running (its enum has no queued), not started, and its state queued",
    );
    const stop = await client.post('deployment.killProcess', { deploymentId: waiting.deploymentId });
    t.match(stop.body, { status: 'error', state: 'cancelled', errorMessage: 'Deployment cancelled' }, 'a queued one is cancelled at once');
    blocking.open();
    await waitForStatus(client, blocker.deploymentId, ['done']);
    t.equal((await client.get('deployment.one', { deploymentId: waiting.deploymentId })).body.state, 'cancelled', 'and never runs');
    t.notOk(events(server).some(e => e.event === 'start' && e.deploymentId === waiting.deploymentId));
  });

  t.test('cancelFor stops the running one and cancels the queued; clearQueueFor drops only the queued', async t => {
    const target = unique('cf');
    const a = await enqueue(client, target, { gate: gate(server).file });
    const b = await enqueue(client, target, {});
    await waitForStatus(client, a.deploymentId, ['running']);
    const r = await client.post('deployFixture.cancel', { targetType: 'schedule', targetId: target });
    t.same(r.body, { count: 2 });
    t.equal((await client.get('deployment.one', { deploymentId: a.deploymentId })).body.state, 'cancelled');
    t.equal((await client.get('deployment.one', { deploymentId: b.deploymentId })).body.state, 'cancelled');

    const target2 = unique('cq');
    const held = gate(server);
    const c = await enqueue(client, target2, { gate: held.file });
    const d = await enqueue(client, target2, {});
    await waitForStatus(client, c.deploymentId, ['running']);
    const cleared = await client.post('deployFixture.clear', { targetType: 'schedule', targetId: target2 });
    t.same(cleared.body, { count: 1 });
    t.equal((await client.get('deployment.one', { deploymentId: d.deploymentId })).body.state, 'cancelled');
    held.open();
    t.equal((await waitForStatus(client, c.deploymentId, ['done', 'error', 'cancelled'])).status, 'done', 'the running one goes on');
  });

  t.test('retention keeps the newest deploymentsKept finished deployments of a target, with their logs', async t => {
    const target = unique('keep');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await enqueue(client, target, { lines: [`run ${i}`] })).deploymentId);
    await waitForStatus(client, ids[4]!, ['done']);
    // Retention runs right after the last one's end is recorded.
    const listed = async () => (await client.get('deployment.allByType', { id: target, type: 'schedule' })).body as { deploymentId: string; logPath: string }[];
    const list = await waitFor('retention to apply', async () => {
      const now = await listed();
      return now.length <= 3 && now;
    });
    t.same(
      list.map(d => d.deploymentId),
      [ids[4], ids[3], ids[2]],
      'the three newest remain',
    );
    t.ok(list.every(d => existsSync(d.logPath)));
    t.notOk(existsSync(`${server.dataDir}/logs/deployments/${ids[0]}.log`), 'older logs are removed');
    t.equal((await client.get('deployment.one', { deploymentId: ids[0] })).status, 404);
  });

  t.test('removeDeployment deletes a finished deployment and its log, never an active one', async t => {
    const target = unique('rm');
    const d = await enqueue(client, target, { lines: ['x'] });
    await waitForStatus(client, d.deploymentId, ['done']);
    const held = gate(server);
    const active = await enqueue(client, target, { gate: held.file });
    await waitForStatus(client, active.deploymentId, ['running']);
    const refused = await client.post('deployment.removeDeployment', { deploymentId: active.deploymentId });
    t.equal(refused.status, 400);
    t.match(refused.body.message, /is running: stop it/);
    const removed = await client.post('deployment.removeDeployment', { deploymentId: d.deploymentId });
    t.equal(removed.status, 200);
    t.equal(removed.body.deploymentId, d.deploymentId);
    t.notOk(existsSync(d.logPath));
    t.equal((await client.get('deployment.one', { deploymentId: d.deploymentId })).status, 404);
    held.open();
    await waitForStatus(client, active.deploymentId, ['done']);
  });

  t.test('listFor groups by target, newest first; removeFor drops finished ones, or all with includeActive', async t => {
    const [a, b] = [unique('la'), unique('lb')];
    const a1 = await enqueue(client, a, {});
    const a2 = await enqueue(client, a, {});
    const b1 = await enqueue(client, b, {});
    for (const d of [a1, a2, b1]) await waitForStatus(client, d.deploymentId, ['done']);
    const listed = await client.post('deployFixture.list', { targetType: 'schedule', targetIds: [a, b, 'none'] });
    t.equal(listed.status, 200);
    t.same(
      listed.body[a].map((d: { deploymentId: string }) => d.deploymentId),
      [a2.deploymentId, a1.deploymentId],
    );
    t.same(
      listed.body[b].map((d: { deploymentId: string }) => d.deploymentId),
      [b1.deploymentId],
    );
    t.same(listed.body.none, []);

    // A gate nobody opens: the local host is free again only if the removal stopped it.
    const running = await enqueue(client, a, { gate: gate(server).file });
    await waitForStatus(client, running.deploymentId, ['running']);
    await client.post('deployFixture.remove', { targetType: 'schedule', targetId: a });
    let left = (await client.get('deployment.allByType', { id: a, type: 'schedule' })).body;
    t.same(
      left.map((d: { deploymentId: string }) => d.deploymentId),
      [running.deploymentId],
      'only the running one is left',
    );
    t.notOk(existsSync(a1.logPath));
    await client.post('deployFixture.remove', { targetType: 'schedule', targetId: a, includeActive: true });
    left = (await client.get('deployment.allByType', { id: a, type: 'schedule' })).body;
    t.same(left, [], 'includeActive removes the running one too');
    // Its run stopped: the next deployment on the host can start.
    const next = await enqueue(client, unique('n'), {});
    t.equal((await waitForStatus(client, next.deploymentId, ['done'])).status, 'done');
  });

  t.test("deployment.all and allByCompose check the workload's organization", async t => {
    const appId = unique('app');
    await client.post('deployFixture.own', { applicationId: appId });
    const r = await client.post('deployFixture.enqueue', { targetType: 'application', targetId: appId });
    await waitForStatus(client, r.body.deploymentId, ['done']);
    const all = await client.get('deployment.all', { applicationId: appId });
    t.equal(all.status, 200);
    t.match(all.body, [{ deploymentId: r.body.deploymentId, applicationId: appId, scheduleId: null }]);
    t.equal((await other.client.get('deployment.all', { applicationId: appId })).status, 404, "another organization's application is NOT_FOUND");
    t.equal((await client.get('deployment.all', { applicationId: 'no-such-app' })).status, 404, 'an unknown application is NOT_FOUND');
    // No compose kind is registered here: nothing is anybody's compose stack.
    t.equal((await client.get('deployment.allByCompose', { composeId: 'c1' })).status, 404);
    const byServer = await client.get('deployment.allByServer', { serverId: unique('srv') });
    t.same(byServer.body, [], 'a server without deployments has an empty list');
  });

  t.test('another organization sees none of it', async t => {
    const target = unique('iso');
    const d = await enqueue(client, target, { lines: ['private'], sleepMs: 300 });
    await waitForStatus(client, d.deploymentId, ['running', 'done']);
    const o = other.client;
    t.equal((await o.get('deployment.one', { deploymentId: d.deploymentId })).status, 404);
    t.equal((await o.get('deployment.readLogs', { deploymentId: d.deploymentId })).status, 404);
    t.equal((await o.post('deployment.killProcess', { deploymentId: d.deploymentId })).status, 404);
    t.equal((await o.post('deployment.removeDeployment', { deploymentId: d.deploymentId })).status, 404);
    t.equal((await o.get('deployment.allByType', { id: target, type: 'schedule' })).status, 404);
    t.same((await o.get('deployment.allCentralized')).body, []);
    t.same((await o.get('deployment.queueList')).body, []);
    t.equal((await client.get('deployment.one', { deploymentId: d.deploymentId })).status, 200, 'its own organization does');
    await waitForStatus(client, d.deploymentId, ['done']);
    const central = await client.get('deployment.allCentralized');
    t.equal(central.status, 200, JSON.stringify(central.body).slice(0, 300));
    t.ok(central.body.some((x: { deploymentId: string }) => x.deploymentId === d.deploymentId));
  });

  t.test('queueList answers the unfinished deployments as queue jobs, newest first: running ones active, queued ones waiting', async t => {
    const target = unique('q');
    const held = gate(server);
    const a = await enqueue(client, target, { gate: held.file });
    const b = await enqueue(client, target, {});
    await waitForStatus(client, a.deploymentId, ['running']);
    const q = (await client.get('deployment.queueList')).body as { id: string; state: string; processedOn?: number; data: Record<string, unknown>; servicePath: unknown }[];
    t.same(
      q.map(j => [j.id, j.state]),
      [
        [b.deploymentId, 'waiting'],
        [a.deploymentId, 'active'],
      ],
    );
    t.ok(typeof q[1]!.processedOn === 'number' && !('processedOn' in q[0]!), 'the running job has started, the waiting one not');
    t.match(q[1], { data: { deploymentId: a.deploymentId, scheduleId: target, applicationType: 'schedule' }, servicePath: { href: null, label: '—' } }, 'a target that is no workload has no page');
    held.open();
    await waitForStatus(client, b.deploymentId, ['done']);
  });

  t.test('bad input names the field; no credential is a 401', async t => {
    const badType = await client.get('deployment.allByType', { id: 'x', type: 'nonsense' });
    t.equal(badType.status, 400);
    t.match(JSON.stringify(badType.body.issues), /type/);
    const noId = await client.get('deployment.all', {});
    t.equal(noId.status, 400);
    t.match(JSON.stringify(noId.body.issues), /applicationId/);
    const emptyId = await client.post('deployment.killProcess', { deploymentId: '' });
    t.equal(emptyId.status, 400);
    t.match(JSON.stringify(emptyId.body.issues), /deploymentId/);
    const badTail = await client.get('deployment.readLogs', { deploymentId: 'x', tail: 0 });
    t.equal(badTail.status, 400);
    t.match(JSON.stringify(badTail.body.issues), /tail/);
    t.equal((await client.get('deployment.one', { deploymentId: 'nope' })).status, 404);
    t.equal((await new Client(server.url).get('deployment.one', { deploymentId: 'nope' })).status, 401);
  });
});

t.test('the hard timeout stops a deployment: error "timed out", settled', async t => {
  const server = await startServer({ deployTimeoutSeconds: 2 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  const target = unique('slow');
  const d = await enqueue(client, target, { lines: ['waiting forever'], sleepMs: 60_000, ignoreSignal: true });
  const started = Date.now();
  const ended = await waitForStatus(client, d.deploymentId, ['done', 'error', 'cancelled']);
  t.equal(ended.status, 'error');
  t.equal(ended.errorMessage, 'Deployment timed out after 2 s');
  t.ok(Date.now() - started < 30_000, "ended at the limit, long before the deployer's own minute, although it ignores its signal");
  t.match(readFileSync(d.logPath, 'utf8'), /waiting forever\nDeployment timed out after 2 s\n$/);
  t.match(await settleOf(server, target), { outcome: 'error', reason: 'Deployment timed out after 2 s' });
  // The next deployment of the host is not held by the stuck one.
  const next = await enqueue(client, unique('after'), {});
  t.equal((await waitForStatus(client, next.deploymentId, ['done', 'error'])).status, 'done');
});

t.test("a deployment enqueued inside the caller's transaction runs once it is committed", async t => {
  // On a single-session database (the embedded one) a wake-up awaited inside the transaction
  // deadlocks it for good (fixed in f2b37ad). The call is bounded so that shows as a failure, and
  // the server is its own: the deadlock would hang every later request and the stop.
  const server = await startServer();
  let wedged = false;
  t.teardown(async () => {
    if (!wedged) return server.destroy();
    // The stuck transaction holds its connection, and with it the stop and this process: end the
    // process once tap has written the results (this is the file's last test) instead of at tap's timeout.
    setTimeout(() => process.exit(1), 5_000).unref();
  });
  const { apiKey } = await signUpAdmin(server);
  const client = new Client(server.url, { apiKey });
  const answered = await client
    .raw('/api/deployFixture.enqueueInTransaction', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ targetType: 'schedule', targetId: unique('tx') }),
      signal: AbortSignal.timeout(20_000),
    })
    .catch((e: Error) => e);
  if (answered instanceof Error) {
    wedged = true;
    t.fail(`deployment.enqueue inside a transaction did not answer within 20 s (${answered.message}): the enqueue waits for something the open transaction holds`);
    return;
  }
  t.equal(answered.status, 200);
  // Woken at the commit: well before the periodic sweep (every minute) would find it.
  t.equal((await waitForStatus(client, answered.body.deploymentId, ['done', 'error'], 15_000)).status, 'done');
});
