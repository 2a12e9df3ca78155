// Which swarm nodes the pull check asks: active, ready nodes that satisfy the placement constraints
// Berth can read (node.id, node.hostname, node.role, node.labels, engine.labels, node.platform);
// a constraint on anything else leaves a node in, so the check asks too many nodes, never too few.
import t from 'tap';
import { placeable } from '../src/swarm/pull-check.ts';

const node = (over: Record<string, unknown> = {}) => ({
  ID: 'n1',
  Spec: { Role: 'worker', Availability: 'active', Labels: { zone: 'b' } },
  Description: { Hostname: 'w1', Platform: { OS: 'linux', Architecture: 'x86_64' }, Engine: { Labels: { disk: 'ssd' } } },
  Status: { State: 'ready' },
  ...over,
});

t.test('no constraint: every active, ready node', async t => {
  t.ok(placeable(node(), []));
  t.notOk(placeable(node({ Spec: { Role: 'worker', Availability: 'drain' } }), []), 'a drained node gets no task');
  t.notOk(placeable(node({ Status: { State: 'down' } }), []), 'nor a node that is down');
});

t.test('the constraints Berth reads, == and !=, any case and spacing', async t => {
  const cases: [string, boolean][] = [
    ['node.role==worker', true],
    ['node.role == manager', false],
    ['node.role!=manager', true],
    ['node.id==n1', true],
    ['node.id!=n1', false],
    ['node.hostname==W1', true],
    ['node.hostname!=w1', false],
    ['node.labels.zone==b', true],
    ['node.labels.zone==a', false],
    ['node.labels.rack!=x', true],
    ['engine.labels.disk==ssd', true],
    ['node.platform.os==windows', false],
    ['node.platform.arch==x86_64', true],
    ['node.something.else==x', true],
  ];
  for (const [constraint, expected] of cases) t.equal(placeable(node(), [constraint]), expected, constraint);
  t.notOk(placeable(node(), ['node.role==worker', 'node.hostname==w2']), 'every constraint must hold');
});

t.test("a label's name is matched as written (an organization's id has capitals): only the attribute's prefix in any case", async t => {
  const labelled = node({ Spec: { Role: 'worker', Availability: 'active', Labels: { 'berth.org.gfxXWPv-c3O5': 'true' } } });
  t.ok(placeable(labelled, ['node.labels.berth.org.gfxXWPv-c3O5==true']), 'the organization the node carries');
  t.ok(placeable(labelled, ['Node.Labels.berth.org.gfxXWPv-c3O5 == true']), 'the prefix in another case');
  t.notOk(placeable(labelled, ['node.labels.berth.org.gfxxwpv-c3o5==true']), 'another name, as Swarm reads it');
  t.notOk(placeable(labelled, ['node.labels.berth.org.Other==true']), 'another organization');
});
