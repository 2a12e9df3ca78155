// deployConcurrency above one: targets overlap on a host, one target's deployments still never do.
import t from 'tap';
import { signUpAdmin } from '@berth/core/testing';
import { startServer, enqueue, waitForStatus, events, gate, unique, type FixtureEvent } from './helpers.ts';

const span = (ev: FixtureEvent[], id: string) => ({ start: ev.find(e => e.event === 'start' && e.deploymentId === id)!.at, end: ev.find(e => e.event === 'end' && e.deploymentId === id)!.at });

t.test('with deployConcurrency 2', async t => {
  const server = await startServer({ deployConcurrency: 2 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);

  t.test('two targets run at the same time, a third waits for a free slot', async t => {
    // Each held at a gate, so what runs at once does not depend on how fast the machine is.
    const [ga, gb] = [gate(server), gate(server)];
    const a = await enqueue(client, unique('a'), { gate: ga.file });
    const b = await enqueue(client, unique('b'), { gate: gb.file });
    const c = await enqueue(client, unique('c'), {});
    for (const d of [a, b]) await waitForStatus(client, d.deploymentId, ['running']);
    const status = async (d: { deploymentId: string }) => (await client.get('deployment.one', { deploymentId: d.deploymentId })).body.state;
    t.same([await status(a), await status(b), await status(c)], ['running', 'running', 'queued'], 'the first two run at the same time, the third waits');
    ga.open();
    await waitForStatus(client, c.deploymentId, ['done']);
    t.equal(await status(b), 'running', 'it ran in the slot the first one freed');
    gb.open();
    await waitForStatus(client, b.deploymentId, ['done']);
    const ev = events(server);
    t.ok(span(ev, c.deploymentId).start >= span(ev, a.deploymentId).end, 'the third started once the first ended');
  });

  t.test("one target's deployments never overlap, even with free slots", async t => {
    const target = unique('same');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await enqueue(client, target, { sleepMs: 200 })).deploymentId);
    for (const id of ids) await waitForStatus(client, id, ['done']);
    const ev = events(server);
    const spans = ids.map(id => span(ev, id));
    t.ok(spans[1]!.start >= spans[0]!.end && spans[2]!.start >= spans[1]!.end, 'one after the other, in order');
  });
});
