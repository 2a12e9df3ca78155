// The compose file as a YAML document: what a transform does not touch comes back as written
// (comments, unknown keys, anchors, quoting), and a broken file is refused naming its line.
import t from 'tap';
import { addSuffix, composeText, isolate, parseCompose, serviceNames, withDomains } from '../../src/file/index.ts';

const FILE = `# Stack of the shop (comment at the top)
version: "3.8"
x-logging: &logging
  driver: json-file # keep the default driver
  options: {max-size: "10m"}
services:
  # the web front
  web:
    image: "berth-test/static-httpd:2"
    logging: *logging
    x-berth-note: an unknown key
    command: ["httpd", "-f", "-p", "8080"]
    healthcheck:
      test: ["CMD", "wget", "-qO-", "http://localhost:8080/"]
      interval: 5s
  cache:
    image: berth-test/redis:1 # pinned
    sysctls:
      net.core.somaxconn: 1024
`;

t.test('parse and write back without a change gives the same text (flow collections are written unpadded, {a: 1})', async t => {
  t.equal(composeText(parseCompose(FILE)), FILE);
});

t.test('comments, unknown keys, anchors and quoting survive every transform', async t => {
  const route = {
    serviceName: 'web',
    host: 'shop.example.com',
    path: '/',
    port: 8080,
    https: false,
    uniqueConfigKey: 1,
    appName: 'shop',
    certificateType: 'none',
    stripPath: false,
    internalPath: '/',
  };
  for (const [what, out] of [
    ['addSuffix', addSuffix(FILE, 'abc', 'berth-network')],
    ['isolate', isolate(FILE, 'shop-net')],
    ['withDomains', withDomains(FILE, [route], { type: 'docker-compose', proxy: 'labels', platformNetwork: 'berth-network' })],
  ] as const) {
    for (const kept of [
      '# Stack of the shop (comment at the top)',
      '# keep the default driver',
      '# the web front',
      '# pinned',
      'x-berth-note: an unknown key',
      'logging: *logging',
      'x-logging: &logging',
      'image: "berth-test/static-httpd:2"',
      'net.core.somaxconn: 1024',
      'command: ["httpd", "-f", "-p", "8080"]',
    ]) {
      t.ok(out.includes(kept), `${what} keeps ${kept}`);
    }
  }
});

t.test('long values are never folded onto several lines', async t => {
  const long = `services:\n  a:\n    image: x\n    command: ${'word '.repeat(40).trim()}\n`;
  t.equal(composeText(parseCompose(long)), long);
});

t.test("serviceNames lists the services in the file's order", async t => {
  t.same(serviceNames(FILE), ['web', 'cache']);
  t.same(serviceNames('version: "3"\n'), []);
  t.same(serviceNames(''), []);
});

t.test('a file that is not YAML, or not a compose mapping, is refused naming the line', async t => {
  t.throws(() => parseCompose('services:\n  web:\n    image: x\n   bad: [\n'), /line \d+, column \d+/);
  t.throws(() => parseCompose('services:\n  a: 1\n  a: 2\n'), /line 3/, 'a duplicated key');
  t.throws(() => parseCompose('- a\n- b\n'), /must be a mapping.*line 1 holds a list/);
  t.throws(() => parseCompose('just text'), /must be a mapping.*single value/);
  t.throws(() => parseCompose('version: "3"\nservices:\n  - web\n'), /"services" must be a mapping.*line 3/);
});
