// A compose value interpolated as the Compose program does it, and the images of a file written
// with variables as the program will read them (the registry's CLI login matches those).
import t from 'tap';
import { serviceImages } from '../../src/file/index.ts';
import { interpolate } from '../../src/file/interpolate.ts';

t.test('the forms Compose interpolates', async t => {
  const vars = { REGISTRY: 'registry.example:5000', TAG: '1.2', EMPTY: '' };
  const cases: [string, string | null][] = [
    ['${REGISTRY}/app:${TAG}', 'registry.example:5000/app:1.2'],
    ['$REGISTRY/app:$TAG', 'registry.example:5000/app:1.2'],
    ['${MISSING}app', 'app'],
    ['${MISSING:-reg.local}/app', 'reg.local/app'],
    ['${EMPTY:-reg.local}/app', 'reg.local/app'],
    ['${EMPTY-reg.local}/app', '/app'],
    ['${MISSING-reg.local}/app', 'reg.local/app'],
    ['${TAG:+v${TAG}}', 'v1.2'],
    ['${EMPTY:+x}|${EMPTY+x}|${MISSING+x}', '|x|'],
    ['${MISSING:-${REGISTRY}}/a', 'registry.example:5000/a'],
    ['${TAG:?a tag is needed}', '1.2'],
    ['${MISSING:?a tag is needed}', null],
    ['${EMPTY:?a tag is needed}', null],
    ['${EMPTY?set but empty is enough}', ''],
    ['cost $$5 and $ alone', 'cost $5 and $ alone'],
    ['${UNCLOSED', null],
    ['${1BAD}', null],
  ];
  for (const [value, expected] of cases) t.equal(interpolate(value, vars), expected, value);
});

t.test('images written with variables, as the program will read them', async t => {
  const file = [
    'services:',
    '  web:',
    '    image: ${REGISTRY}/team/web:${TAG}',
    '  worker:',
    '    image: "${REGISTRY:-reg.local}/team/worker:${TAG:?set TAG}"',
    '  plain:',
    '    image: busybox:1',
    '  same:',
    '    image: $REGISTRY/team/web:$TAG',
    '  refused:',
    '    image: ${REGISTRY}/x:${NOPE:?needed}',
    '',
  ].join('\n');
  t.same(serviceImages(file), ['busybox:1'], 'without the variables, an image with a $ is skipped');
  t.same(serviceImages(file, { REGISTRY: 'registry.example:5000', TAG: '7' }), ['registry.example:5000/team/web:7', 'registry.example:5000/team/worker:7', 'busybox:1'], 'interpolated, each once');
  t.same(serviceImages(file, { TAG: '7' }), ['/team/web:7', 'reg.local/team/worker:7', 'busybox:1'], 'defaults apply; an unset variable is empty');
});
