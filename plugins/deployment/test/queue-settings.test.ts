// The peer's settings.* about the deploy queue, on the real queue: updateBuildsConcurrency changes
// how many deployments run at once on this machine (a waiting one starts as soon as the limit is
// raised), updateRemoteServersOnly refuses a workload's deployment here, cleanAllDeploymentQueue
// cancels the organization's waiting deployments (never one that runs, never another
// organization's). Each on both wire forms; a member, and another organization's owner, refused
// where the peer refuses.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { addMember, otherOrganization, signUpAdmin, type Client, type Reply } from '@berth/core/testing';
import { enqueue, events, gate, startServer, unique, waitForStatus } from './helpers.ts';

/** The answer of either wire form: the tRPC envelope's json, or the REST body. */
const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);
const state = async (c: Client, deploymentId: string) => (await c.get('deployment.one', { deploymentId })).body.state as string;

t.test('settings.* of the deploy queue', async t => {
  const server = await startServer();
  t.teardown(() => server.destroy());
  const admin = await signUpAdmin(server);
  const a = admin.client;
  const member = await addMember(server, a, 'member@example.com', 'member');
  // Another organization's owner: an admin there, no operator of this machine.
  const other = await otherOrganization(server, member.userId);
  const b = other.client;

  t.test('updateBuildsConcurrency: the queue runs as many at once as the operators set', async t => {
    const [ga, gb] = [gate(server), gate(server)];
    const first = await enqueue(a, unique('first'), { gate: ga.file });
    await waitForStatus(a, first.deploymentId, ['running']);
    const second = await enqueue(a, unique('second'), { gate: gb.file });
    // The configuration's deployConcurrency (1): the second waits while the first runs.
    await sleep(1500);
    t.equal(await state(a, second.deploymentId), 'queued', 'with one at a time, the second waits');

    const raised = await a.trpc('mutation', 'settings.updateBuildsConcurrency', { buildsConcurrency: 2 });
    t.equal(raised.status, 200, JSON.stringify(raised.body));
    t.equal(data(raised), true, 'the peer’s answer (tRPC form)');
    await waitForStatus(a, second.deploymentId, ['running']);
    t.equal(await state(a, first.deploymentId), 'running', 'raised to two: the second starts while the first still runs');
    ga.open();
    gb.open();
    for (const d of [first, second]) await waitForStatus(a, d.deploymentId, ['done']);

    const lowered = await a.post('settings.updateBuildsConcurrency', { buildsConcurrency: 1 });
    t.same([lowered.status, lowered.body], [200, true], 'back to one (REST form)');
    const [gc, gd] = [gate(server), gate(server)];
    const third = await enqueue(a, unique('third'), { gate: gc.file });
    await waitForStatus(a, third.deploymentId, ['running']);
    const fourth = await enqueue(a, unique('fourth'), { gate: gd.file });
    await sleep(1500);
    t.equal(await state(a, fourth.deploymentId), 'queued', 'one at a time again: the fourth waits');
    gc.open();
    await waitForStatus(a, fourth.deploymentId, ['running']);
    gd.open();
    await waitForStatus(a, fourth.deploymentId, ['done']);
    const ev = events(server);
    const at = (id: string, e: string) => ev.find(x => x.event === e && x.deploymentId === id)!.at;
    t.ok(at(fourth.deploymentId, 'start') >= at(third.deploymentId, 'end'), 'the fourth started once the third ended');

    for (const buildsConcurrency of [0, 101, 1.5]) t.equal((await a.post('settings.updateBuildsConcurrency', { buildsConcurrency })).status, 400, `${buildsConcurrency} is refused`);
    t.equal((await a.post('settings.updateBuildsConcurrency', {})).status, 400, 'buildsConcurrency is required');
    t.equal((await member.client.post('settings.updateBuildsConcurrency', { buildsConcurrency: 3 })).status, 403, 'a member may not');
    const stranger = await b.trpc('mutation', 'settings.updateBuildsConcurrency', { buildsConcurrency: 3 });
    t.equal(stranger.status, 403, "another organization's owner may not: this machine is the instance operators'");
    t.match(JSON.stringify(stranger.body), /only the instance's operators/);
  });

  t.test('cleanAllDeploymentQueue cancels what waits in the caller’s organization only', async t => {
    const g = gate(server);
    const running = await enqueue(a, unique('running'), { gate: g.file });
    await waitForStatus(a, running.deploymentId, ['running']);
    const waiting = [await enqueue(a, unique('w1')), await enqueue(a, unique('w2'))];
    const theirs = await enqueue(b, unique('theirs'));
    for (const d of waiting) t.equal(await state(a, d.deploymentId), 'queued');
    t.equal(await state(b, theirs.deploymentId), 'queued', "the other organization's waits too (one at a time on this machine)");

    t.equal((await member.client.post('settings.cleanAllDeploymentQueue', {})).status, 403, 'a member may not (admins, as the peer)');
    const mine = await b.post('settings.cleanAllDeploymentQueue', {});
    t.same([mine.status, mine.body], [200, true], "the other organization's admin clears its own queue (REST form)");
    t.equal(await state(b, theirs.deploymentId), 'cancelled', 'its deployment is cancelled');
    for (const d of waiting) t.equal(await state(a, d.deploymentId), 'queued', 'and none of the first organization’s');

    const cleared = await a.trpc('mutation', 'settings.cleanAllDeploymentQueue', {});
    t.equal(cleared.status, 200, JSON.stringify(cleared.body));
    t.equal(data(cleared), true, 'the peer’s answer (tRPC form)');
    for (const d of waiting) {
      const r = await waitForStatus(a, d.deploymentId, ['cancelled']);
      t.ok(r.finishedAt, 'cancelled, with its end');
    }
    t.equal(await state(a, running.deploymentId), 'running', 'the running one goes on');
    g.open();
    await waitForStatus(a, running.deploymentId, ['done']);
    await sleep(500);
    const started = new Set(
      events(server)
        .filter(e => e.event === 'start')
        .map(e => e.deploymentId),
    );
    t.same(
      [...waiting, theirs].filter(d => started.has(d.deploymentId)),
      [],
      'no cancelled deployment ever started',
    );
  });

  t.test('updateRemoteServersOnly: no workload deploys on this machine while it is on', async t => {
    t.equal((await member.client.post('settings.updateRemoteServersOnly', { remoteServersOnly: true })).status, 403, 'a member may not');
    t.equal((await b.post('settings.updateRemoteServersOnly', { remoteServersOnly: true })).status, 403, "nor another organization's owner");
    t.equal((await a.post('settings.updateRemoteServersOnly', { remoteServersOnly: 'yes' })).status, 400, 'a boolean');
    const on = await a.trpc('mutation', 'settings.updateRemoteServersOnly', { remoteServersOnly: true });
    t.same([on.status, data(on)], [200, true], 'turned on (tRPC form)');

    const refused = await a.post('deployFixture.enqueue', { targetType: 'application', targetId: unique('app') });
    t.equal(refused.status, 409, "a workload's deployment on this machine is refused before it is queued");
    t.match(refused.body.message, /deploys workloads to servers only \(settings\.updateRemoteServersOnly\)/);
    const care = await enqueue(a, unique('care'));
    await waitForStatus(a, care.deploymentId, ['done']);
    t.pass('what is not a workload (host care, a schedule) still runs here');

    const off = await a.post('settings.updateRemoteServersOnly', { remoteServersOnly: false });
    t.same([off.status, off.body], [200, true], 'turned off (REST form)');
    const again = await a.post('deployFixture.enqueue', { targetType: 'application', targetId: unique('app') });
    t.equal(again.status, 200, JSON.stringify(again.body));
    await waitForStatus(a, again.body.deploymentId, ['done']);
  });
});
