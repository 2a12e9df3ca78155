// deployConcurrency above one: targets overlap on a host, one target's deployments still never do.
import t from 'tap';
import { signUpAdmin } from '@berth/core/testing';
import { startServer, enqueue, waitForStatus, events, unique, type FixtureEvent } from './helpers.ts';

const span = (ev: FixtureEvent[], id: string) => ({
  start: ev.find(e => e.event === 'start' && e.deploymentId === id)!.at,
  end: ev.find(e => e.event === 'end' && e.deploymentId === id)!.at,
});

t.test('with deployConcurrency 2', async t => {
  const server = await startServer({ deployConcurrency: 2 });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);

  t.test('two targets run at the same time, a third waits for a free slot', async t => {
    const a = await enqueue(client, unique('a'), { sleepMs: 800 });
    const b = await enqueue(client, unique('b'), { sleepMs: 800 });
    const c = await enqueue(client, unique('c'), { sleepMs: 800 });
    for (const d of [a, b, c]) await waitForStatus(client, d.deploymentId, ['done']);
    const ev = events(server);
    const [sa, sb, sc] = [span(ev, a.deploymentId), span(ev, b.deploymentId), span(ev, c.deploymentId)];
    const overlapping = (x: typeof sa, y: typeof sa) => x.start < y.end && y.start < x.end;
    t.ok(overlapping(sa, sb), 'the first two overlap');
    t.ok(sc.start >= Math.min(sa.end, sb.end), 'the third starts once one of them ended');
  });

  t.test('one target\'s deployments never overlap, even with free slots', async t => {
    const target = unique('same');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await enqueue(client, target, { sleepMs: 200 })).deploymentId);
    for (const id of ids) await waitForStatus(client, id, ['done']);
    const ev = events(server);
    const spans = ids.map(id => span(ev, id));
    t.ok(spans[1]!.start >= spans[0]!.end && spans[2]!.start >= spans[1]!.end, 'one after the other, in order');
  });
});
