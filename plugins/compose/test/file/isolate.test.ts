// isolatedDeployment: the stack's own network, declared at the top level under its exact name, with
// every service on it (the peer's rule), services keeping their own networks. Berth declares it an
// attachable overlay the program creates (its proxy is a swarm service); external on request.
import t from 'tap';
import { parse } from 'yaml';
import { isolate } from '../../src/file/index.ts';

type Json = Record<string, any>;

t.test('every service joins the network; a service without networks gets exactly it', async t => {
  const out = parse(
    isolate(
      `
services:
  web: { image: nginx }
  api: { image: api, networks: [backend] }
  db:
    image: postgres
    networks:
      backend: { aliases: [database] }
networks:
  backend: {}
`,
      'shop-1a2b',
    ),
  ) as Json;
  t.same(out.services.web.networks, ['shop-1a2b']);
  t.same(out.services.api.networks, ['backend', 'shop-1a2b']);
  t.same(out.services.db.networks, { backend: { aliases: ['database'] }, 'shop-1a2b': null });
  t.same(out.networks, { backend: {}, 'shop-1a2b': { name: 'shop-1a2b', driver: 'overlay', attachable: true } });
});

t.test("external: the peer's form, for a caller that creates the network itself", async t => {
  const out = parse(isolate('services:\n  web: { image: nginx }\n', 'shop', { external: true })) as Json;
  t.same(out.networks, { shop: { name: 'shop', external: true } });
  t.same(out.services.web.networks, ['shop']);
});

t.test('isolating twice changes nothing more', async t => {
  const once = isolate('services:\n  web: { image: nginx, networks: [a] }\nnetworks:\n  a: {}\n', 'net');
  t.equal(isolate(once, 'net'), once);
});

t.test('a service with network_mode cannot join networks and is left alone', async t => {
  const out = parse(isolate('services:\n  host: { image: x, network_mode: host }\n  web: { image: y }\n', 'net')) as Json;
  t.same(out.services.host, { image: 'x', network_mode: 'host' });
  t.same(out.services.web.networks, ['net']);
});

t.test("with volumes, named volumes get the network's name as suffix (isolatedDeploymentsVolume)", async t => {
  const out = parse(isolate('services:\n  db: { image: postgres, volumes: ["data:/var/lib/postgresql/data", "./init:/init"] }\nvolumes:\n  data: {}\n', 'shop', { volumes: true })) as Json;
  t.same(out.services.db.volumes, ['data-shop:/var/lib/postgresql/data', './init:/init']);
  t.same(Object.keys(out.volumes), ['data-shop']);
  t.ok(out.services.db, 'services keep their names');
});

t.test('a network name that is not one is refused', async t => {
  t.throws(() => isolate('services: {}', 'bad name'), /network name "bad name"/);
  t.throws(() => isolate('services: {}', '-x'), /network name/);
});
