// Placement by ownership in the file Berth deploys: every service of a stack gets its
// organization's constraint first in deploy.placement.constraints, the file's own after it as
// written; a docker-compose project (plain containers, no Swarm placement) is left as it was.
import t from 'tap';
import { parse } from 'yaml';
import { withOwnership } from '../src/prepare.ts';

const labels = { 'berth.kind': 'compose', 'berth.id': 'cmp_1', 'berth.organization': 'OrgB_9-x' };
const ours = 'node.labels.berth.org.OrgB_9-x==true';
const constraintsOf = (text: string, service: string): unknown =>
  (parse(text) as { services: Record<string, { deploy?: { placement?: { constraints?: unknown } } }> }).services[service]?.deploy?.placement?.constraints;

t.test("a stack's services get the organization's constraint, the file's own kept after it", async t => {
  const file = [
    'services:',
    '  web:',
    '    image: nginx',
    '    deploy:',
    '      placement:',
    '        constraints:',
    '          - node.role == worker',
    '          - node.labels.berth.org.someone-else==true',
    '        preferences:',
    '          - spread: node.labels.zone',
    '  worker:',
    '    image: busybox',
    '  again:',
    '    image: busybox',
    '    deploy:',
    '      placement:',
    '        constraints: ["node.labels.berth.org.OrgB_9-x == true", "node.hostname!=x"]',
    '',
  ].join('\n');
  const out = withOwnership(file, 'stack', labels);
  t.same(constraintsOf(out, 'web'), [ours, 'node.role == worker', 'node.labels.berth.org.someone-else==true'], 'narrowing constraints kept as written; naming another organization only narrows');
  t.same((parse(out) as any).services.web.deploy.placement.preferences, [{ spread: 'node.labels.zone' }], 'the rest of placement kept');
  t.same(constraintsOf(out, 'worker'), [ours], 'a service with no placement gets the constraint');
  t.same(constraintsOf(out, 'again'), [ours, 'node.hostname!=x'], 'a repeat of ours is not added twice');
  t.same(withOwnership(out, 'stack', labels), out, 'deploying the deployed file again changes nothing');
});

t.test('a docker-compose project (no swarm) gets no placement', async t => {
  const out = withOwnership('services:\n  web:\n    image: nginx\n', 'docker-compose', labels);
  t.equal(constraintsOf(out, 'web'), undefined);
});
