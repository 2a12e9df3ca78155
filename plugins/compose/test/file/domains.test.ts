// The compose file with its domains routed for the active proxy: the peer's Traefik labels (its
// own label cases, written here as Berth's), where they go for each compose type, the platform
// network, stale labels, Caddy's alias, and the stacks' DNS round robin.
import t from 'tap';
import { parse } from 'yaml';
import { caddyUpstreamAlias, isolate, traefikLabels, unreachableDomains, withDomains, type ComposeDomainRoute } from '../../src/file/index.ts';

type Json = Record<string, any>;
const base: ComposeDomainRoute = {
  serviceName: 'test-app',
  host: 'example.com',
  path: '/',
  port: 8080,
  https: false,
  uniqueConfigKey: 1,
  appName: 'test-app',
  certificateType: 'none',
  stripPath: false,
  internalPath: '/',
  customEntrypoint: null,
  customCertResolver: null,
  middlewares: null,
};
const labels = (d: Partial<ComposeDomainRoute>, entrypoint: string) => traefikLabels('test-app', { ...base, ...d }, entrypoint);
const R = 'traefik.http.routers.test-app-1';

t.test('Traefik labels: the four base labels on web, websecure and a custom entry point', async t => {
  t.same(labels({}, 'web'), [
    `${R}-web.rule=Host(\`example.com\`)`,
    `${R}-web.entrypoints=web`,
    'traefik.http.services.test-app-1-web.loadbalancer.server.port=8080',
    `${R}-web.service=test-app-1-web`,
  ]);
  t.same(labels({}, 'websecure'), [
    `${R}-websecure.rule=Host(\`example.com\`)`,
    `${R}-websecure.entrypoints=websecure`,
    'traefik.http.services.test-app-1-websecure.loadbalancer.server.port=8080',
    `${R}-websecure.service=test-app-1-websecure`,
  ]);
  t.same(labels({ customEntrypoint: 'custom' }, 'custom'), [
    `${R}-custom.rule=Host(\`example.com\`)`,
    `${R}-custom.entrypoints=custom`,
    'traefik.http.services.test-app-1-custom.loadbalancer.server.port=8080',
    `${R}-custom.service=test-app-1-custom`,
  ]);
  t.same(labels({ customEntrypoint: 'custom', https: true, certificateType: 'letsencrypt' }, 'custom').at(-1), `${R}-custom.tls.certresolver=letsencrypt`);
  t.ok(labels({ port: 3000 }, 'web').includes('traefik.http.services.test-app-1-web.loadbalancer.server.port=3000'));
});

t.test('Traefik labels: the Host rule and PathPrefix keep their parentheses', async t => {
  t.equal(labels({ path: '/api/v1' }, 'websecure')[0], `${R}-websecure.rule=Host(\`example.com\`) && PathPrefix(\`/api/v1\`)`);
  t.match(labels({ path: '/hello' }, 'web')[0], /Host\(`example\.com`\) && PathPrefix\(`\/hello`\)$/);
});

t.test('Traefik labels: TLS by certificate type', async t => {
  t.ok(labels({ https: true, certificateType: 'letsencrypt' }, 'websecure').includes(`${R}-websecure.tls.certresolver=letsencrypt`));
  const none = labels({ https: true, certificateType: 'none' }, 'websecure');
  t.ok(none.includes(`${R}-websecure.tls=true`), 'none: tls on, with the default certificate');
  t.notOk(none.some(l => l.includes('certresolver')));
  t.notOk(labels({ https: true, certificateType: 'none' }, 'web').includes(`${R}-web.tls=true`), 'never on web');
  t.ok(labels({ https: true, certificateType: 'none', customEntrypoint: 'websecure-custom' }, 'websecure-custom').includes(`${R}-websecure-custom.tls=true`));
  t.ok(labels({ https: true, certificateType: 'custom', customCertResolver: 'myresolver' }, 'websecure').includes(`${R}-websecure.tls.certresolver=myresolver`));
  t.ok(labels({ https: true }, 'web').includes(`${R}-web.middlewares=redirect-to-https@file`), 'https: web redirects');
});

t.test('Traefik labels: middlewares, defined on web (or the custom entry point), used on the router that serves', async t => {
  const strip = labels({ path: '/api', stripPath: true }, 'web');
  t.ok(strip.includes('traefik.http.middlewares.stripprefix-test-app-1.stripprefix.prefixes=/api'));
  t.ok(strip.includes(`${R}-web.middlewares=stripprefix-test-app-1`));
  const add = { internalPath: '/hello' };
  t.ok(labels(add, 'web').includes('traefik.http.middlewares.addprefix-test-app-1.addprefix.prefix=/hello'));
  t.notOk(labels(add, 'websecure').includes('traefik.http.middlewares.addprefix-test-app-1.addprefix.prefix=/hello'), 'defined once, on web');
  t.ok(labels(add, 'websecure').includes(`${R}-websecure.middlewares=addprefix-test-app-1`));
  const all = { https: true, path: '/api', stripPath: true, internalPath: '/hello', middlewares: ['auth@file', 'rate-limit@file'] };
  const web = labels(all, 'web');
  t.ok(web.includes(`${R}-web.middlewares=redirect-to-https@file`), 'the https web router only redirects');
  t.notOk(web.some(l => l.includes('auth@file') || l.includes('stripprefix-test-app-1,')));
  t.ok(web.includes('traefik.http.middlewares.stripprefix-test-app-1.stripprefix.prefixes=/api'));
  t.ok(labels(all, 'websecure').includes(`${R}-websecure.middlewares=stripprefix-test-app-1,addprefix-test-app-1,auth@file,rate-limit@file`), "strip, add, then the domain's own");
  t.ok(labels({ path: '/api', stripPath: true, middlewares: ['auth@file'] }, 'web').includes(`${R}-web.middlewares=stripprefix-test-app-1,auth@file`));
  t.ok(labels({ middlewares: ['auth@file', 'rate-limit@file'] }, 'web').includes(`${R}-web.middlewares=auth@file,rate-limit@file`));
  const custom = labels({ customEntrypoint: 'custom', path: '/api', stripPath: true, internalPath: '/hello' }, 'custom');
  t.ok(custom.includes('traefik.http.middlewares.stripprefix-test-app-1.stripprefix.prefixes=/api'));
  t.ok(custom.includes('traefik.http.middlewares.addprefix-test-app-1.addprefix.prefix=/hello'));
  t.ok(custom.includes(`${R}-custom.middlewares=stripprefix-test-app-1,addprefix-test-app-1`));
  t.notOk(
    labels({ stripPath: true, path: '/' }, 'web').some(l => l.includes('stripprefix')),
    'nothing to strip from /',
  );
});

const FILE = `
services:
  web:
    image: berth-test/static-httpd:2
    labels:
      com.example.keep: "yes"
  worker:
    image: berth-test/busybox:1
    networks: [backend]
    labels: ["com.example.role=worker"]
networks:
  backend: {}
`;
const route = (d: Partial<ComposeDomainRoute> = {}): ComposeDomainRoute => ({ ...base, appName: 'shop', serviceName: 'web', host: 'shop.example.com', port: 8080, uniqueConfigKey: 7, ...d });

t.test('docker-compose with Traefik: labels on the service, the platform network joined and declared external', async t => {
  const out = parse(
    withDomains(FILE, [route({ https: true, certificateType: 'letsencrypt' }), route({ serviceName: 'worker', host: 'w.example.com', uniqueConfigKey: 8 })], {
      type: 'docker-compose',
      proxy: 'labels',
      platformNetwork: 'berth-network',
    }),
  ) as Json;
  const web = out.services.web;
  t.equal(web.labels['com.example.keep'], 'yes', "the file's own labels stay (map form stays a map)");
  t.equal(web.labels['traefik.enable'], 'true');
  t.equal(web.labels['traefik.docker.network'], 'berth-network');
  t.equal(web.labels['traefik.http.routers.shop-7-web.middlewares'], 'redirect-to-https@file');
  t.equal(web.labels['traefik.http.routers.shop-7-websecure.tls.certresolver'], 'letsencrypt');
  t.same(web.networks, ['default', 'berth-network'], 'a service without networks stays on default too');
  t.same(out.services.worker.networks, ['backend', 'berth-network'], 'a service keeps its own networks');
  t.ok(out.services.worker.labels.includes('com.example.role=worker') && out.services.worker.labels.includes('traefik.http.routers.shop-8-web.rule=Host(`w.example.com`)'), 'list form stays a list');
  t.same(out.networks['berth-network'], { external: true }, 'declared as the peer does: external, the key being the name');
  t.equal(out.services.web.deploy, undefined, 'nothing under deploy for compose');
});

t.test('a stack with Traefik: labels under deploy.labels and the swarm network label', async t => {
  const out = parse(withDomains(FILE, [route()], { type: 'stack', proxy: 'labels', platformNetwork: 'berth-network' })) as Json;
  const web = out.services.web;
  t.same(web.labels, { 'com.example.keep': 'yes' }, 'container labels untouched');
  t.ok(web.deploy.labels.includes('traefik.swarm.network=berth-network'));
  t.ok(web.deploy.labels.includes('traefik.http.services.shop-7-web.loadbalancer.server.port=8080'));
  t.equal(web.deploy.endpoint_mode, 'dnsrr');
});

t.test('converting again replaces the routing labels: a changed or deleted domain leaves nothing stale', async t => {
  const opts = { type: 'docker-compose', proxy: 'labels', platformNetwork: 'berth-network', appName: 'shop' } as const;
  const first = withDomains(FILE, [route({ uniqueConfigKey: 7 }), route({ serviceName: 'worker', uniqueConfigKey: 8 })], opts);
  const second = parse(withDomains(first, [route({ uniqueConfigKey: 9, host: 'new.example.com' })], opts)) as Json;
  const keys = Object.keys(second.services.web.labels);
  t.notOk(
    keys.some(k => k.includes('shop-7-')),
    'the old router of web is gone',
  );
  t.ok(keys.includes('traefik.http.routers.shop-9-web.rule'));
  t.same(second.services.worker.labels, ['com.example.role=worker'], 'worker lost its routing, enable and network labels, kept its own');
  const none = parse(withDomains(first, [], opts)) as Json;
  t.same(none.services.web.labels, { 'com.example.keep': 'yes' });
  const other = parse(withDomains(withDomains(FILE, [route({ appName: 'other' })], opts), [], opts)) as Json;
  t.ok(
    Object.keys(other.services.web.labels).some(k => k.startsWith('traefik.http.routers.other-7-')),
    "another workload's labels are not this one's to remove",
  );
  const disabled = parse(withDomains(first, [route({ uniqueConfigKey: 7, enabled: false })], opts)) as Json;
  t.same(disabled.services.web.labels, { 'com.example.keep': 'yes' }, 'a disabled domain is not routed');
});

t.test('Caddy: no labels; docker-compose services get the alias <appName>-<serviceName> on the platform network', async t => {
  const compose = parse(withDomains(FILE, [route(), route({ serviceName: 'worker', uniqueConfigKey: 8 })], { type: 'docker-compose', proxy: 'alias', platformNetwork: 'berth-network' })) as Json;
  t.equal(caddyUpstreamAlias('shop', 'web'), 'shop-web');
  t.same(compose.services.web.networks, { default: null, 'berth-network': { aliases: ['shop-web'] } });
  t.same(compose.services.worker.networks, { backend: null, 'berth-network': { aliases: ['shop-worker'] } });
  t.same(compose.services.web.labels, { 'com.example.keep': 'yes' });
  t.same(compose.networks['berth-network'], { external: true });
  const stack = parse(withDomains(FILE, [route()], { type: 'stack', proxy: 'alias', platformNetwork: 'berth-network' })) as Json;
  t.same(stack.services.web.networks, ['default', 'berth-network'], 'a stack is reached as tasks.<appName>_<service>: no alias');
  t.equal(stack.services.web.deploy.labels, undefined);
  const twice = withDomains(withDomains(FILE, [route()], { type: 'docker-compose', proxy: 'alias', platformNetwork: 'berth-network' }), [route()], {
    type: 'docker-compose',
    proxy: 'alias',
    platformNetwork: 'berth-network',
  });
  t.same((parse(twice) as Json).services.web.networks['berth-network'].aliases, ['shop-web'], 'the alias is not repeated');
});

t.test('an isolated deployment passes its own network: it is kept as declared, nothing else is added', async t => {
  const own = parse(withDomains(isolate('services:\n  web: { image: x }\n', 'shop'), [route()], { type: 'stack', proxy: 'labels', platformNetwork: 'shop' })) as Json;
  t.same(own.networks, { shop: { name: 'shop', driver: 'overlay', attachable: true } }, "the stack's own overlay stays its own (not made external)");
  t.ok(own.services.web.deploy.labels.includes('traefik.swarm.network=shop'));
  const isolated = 'services:\n  web: { image: x, networks: [shop] }\nnetworks:\n  shop: { name: shop, external: true }\n';
  const out = parse(withDomains(isolated, [route()], { type: 'docker-compose', proxy: 'labels', platformNetwork: 'shop' })) as Json;
  t.same(out.services.web.networks, ['shop']);
  t.same(out.networks, { shop: { name: 'shop', external: true } });
  t.ok(out.services.web.labels.includes('traefik.docker.network=shop'), 'a service without labels gets them as a list');
});

t.test('stacks: dnsrr where the service publishes no ingress port and says nothing itself', async t => {
  const out = parse(
    withDomains(
      `
services:
  plain: { image: x }
  ingress: { image: x, ports: ["8080:80"] }
  hostmode: { image: x, ports: [{ target: 80, published: 8081, mode: host }] }
  ingresslong: { image: x, ports: [{ target: 80, published: 8082 }] }
  chosen: { image: x, deploy: { endpoint_mode: vip, replicas: 2 } }
`,
      [],
      { type: 'stack', proxy: 'none', platformNetwork: 'berth-network' },
    ),
  ) as Json;
  t.equal(out.services.plain.deploy.endpoint_mode, 'dnsrr');
  t.equal(out.services.hostmode.deploy.endpoint_mode, 'dnsrr');
  t.equal(out.services.ingress.deploy, undefined, 'ingress needs a VIP');
  t.equal(out.services.ingresslong.deploy, undefined);
  t.same(out.services.chosen.deploy, { endpoint_mode: 'vip', replicas: 2 }, "the file's own choice stays");
  t.equal(out.networks, undefined, 'no proxy: no network');
  const compose = parse(withDomains('services:\n  plain: { image: x }\n', [], { type: 'docker-compose', proxy: 'none', platformNetwork: 'berth-network' })) as Json;
  t.same(compose.services.plain, { image: 'x' }, 'docker-compose: untouched');
});

t.test('a route that cannot be written is refused with the reason', async t => {
  const opts = { type: 'docker-compose', proxy: 'labels', platformNetwork: 'berth-network' } as const;
  t.throws(() => withDomains(FILE, [route({ serviceName: 'nope' })], opts), /attached to the service "nope", which is not in the compose file \(its services: web, worker\)/);
  t.throws(() => withDomains(FILE, [route({ host: 'a`) || Host(`b' })], opts), /is not a host name/);
  t.throws(() => withDomains(FILE, [route({ path: 'api' })], opts), /not a URL path/);
  t.throws(() => withDomains(FILE, [route({ port: 70000 })], opts), /port 70000/);
  t.throws(() => withDomains(FILE, [route({ middlewares: ['a b'] })], opts), /not a Traefik name/);
  t.throws(() => withDomains(FILE, [], { ...opts, platformNetwork: 'bad net' }), /not a network name/);
});

t.test("unreachableDomains says which routed service is off the proxy's network", async t => {
  const text = 'services:\n  web: { image: x }\n  host: { image: x, network_mode: host }\n  on: { image: x, networks: [berth-network] }\n';
  const issues = unreachableDomains(text, [route(), route({ serviceName: 'host' }), route({ serviceName: 'on' }), route({ serviceName: 'gone' })], 'berth-network');
  t.same(
    issues.map(i => [i.service, i.key]),
    [
      ['web', 'networks'],
      ['host', 'network_mode'],
      ['gone', 'services'],
    ],
  );
  t.match(issues[0]!.reason, /not on the proxy's network "berth-network": the domain would answer 502/);
  const converted = withDomains(text, [route()], { type: 'docker-compose', proxy: 'alias', platformNetwork: 'berth-network' });
  t.same(unreachableDomains(converted, [route()], 'berth-network'), [], 'after the conversion the service is on it');
});
