// randomizeCompose's suffix, on the cases the peer's own tests pin (same inputs and expectations,
// written here as Berth's), plus the places where Berth keeps the file's meaning instead.
import t from 'tap';
import { parse } from 'yaml';
import { addSuffix, randomSuffix } from '../../src/file/index.ts';

type Json = Record<string, any>;
const S = 'testhash';
const run = (text: string, suffix = S, platformNetwork = 'berth-network'): Json => parse(addSuffix(text, suffix, platformNetwork), { merge: true }) as Json;

t.test('a random suffix is 8 hex characters, different each time', async t => {
  const a = randomSuffix();
  t.match(a, /^[0-9a-f]{8}$/);
  t.not(a, randomSuffix());
});

t.test('services: every name gets the suffix, and their definitions stay', async t => {
  const out = run(`
services:
  web: { image: nginx:latest }
  api: { image: myapi:latest }
`);
  t.same(Object.keys(out.services), ['web-testhash', 'api-testhash']);
  t.equal(out.services['web-testhash'].image, 'nginx:latest');
  t.equal(out.services['api-testhash'].image, 'myapi:latest');
});

t.test('depends_on, as a list and as a map with conditions', async t => {
  const list = run(`
services:
  web:
    image: nginx:latest
    depends_on: [db, api]
  api: { image: myapi:latest }
  db: { image: postgres:latest }
`);
  t.same(list.services['web-testhash'].depends_on, ['db-testhash', 'api-testhash']);
  const map = run(`
services:
  web:
    image: nginx:latest
    depends_on:
      db: { condition: service_healthy }
      api: { condition: service_started }
  api: { image: myapi:latest }
  db: { image: postgres:latest }
`);
  t.same(map.services['web-testhash'].depends_on, { 'db-testhash': { condition: 'service_healthy' }, 'api-testhash': { condition: 'service_started' } });
});

t.test('extends, as a service name and as {service, file}', async t => {
  const text = run(`
services:
  web: { image: nginx:latest, extends: base_service }
  base_service: { image: base:latest }
`);
  t.equal(text.services['web-testhash'].extends, 'base_service-testhash');
  t.equal(text.services['base_service-testhash'].image, 'base:latest');
  const object = run(`
services:
  web:
    image: nginx:latest
    extends: { service: base_service, file: docker-compose.base.yml }
  base_service: { image: base:latest }
`);
  t.same(object.services['web-testhash'].extends, { service: 'base_service-testhash', file: 'docker-compose.base.yml' });
});

t.test('links, volumes_from and container_name', async t => {
  const out = run(`
services:
  web:
    image: nginx:latest
    container_name: web_container
    links: [db, "cache:redis"]
    volumes_from: [shared, "shared:ro", "container:some-container"]
  db: { image: postgres }
  cache: { image: redis }
  shared: { image: busybox, volumes: [/data] }
`);
  const web = out.services['web-testhash'];
  t.equal(web.container_name, 'web_container-testhash');
  t.same(web.links, ['db-testhash', 'cache-testhash:redis'], 'the service part of SERVICE:ALIAS gets the suffix, the alias stays');
  t.same(web.volumes_from, ['shared-testhash', 'shared-testhash:ro', 'container:some-container'], 'a container reference is not a service: it stays');
  t.same(out.services['shared-testhash'].volumes, ['/data'], 'an anonymous volume stays');
});

t.test('volumes: top-level names and named references, never bind paths or variables', async t => {
  const out = run(`
services:
  web:
    image: nginx:alpine
    volumes:
      - web_config:/etc/nginx/conf.d:ro
      - certs/sub:/etc/certs:Z
      - ./html:/usr/share/nginx/html
      - /var/run/docker.sock:/var/run/docker.sock
      - $PWD/x:/x
      - ~/cache:/cache
      - /anonymous
      - type: volume
        source: db-test
        target: /var/lib/postgresql/data
      - type: bind
        source: ./conf
        target: /conf
      - type: tmpfs
        target: /scratch
volumes:
  web_config: {}
  certs:
  db-test:
    driver: local
`);
  t.same(out.services['web-testhash'].volumes, [
    'web_config-testhash:/etc/nginx/conf.d:ro',
    'certs-testhash/sub:/etc/certs:Z',
    './html:/usr/share/nginx/html',
    '/var/run/docker.sock:/var/run/docker.sock',
    '$PWD/x:/x',
    '~/cache:/cache',
    '/anonymous',
    { type: 'volume', source: 'db-test-testhash', target: '/var/lib/postgresql/data' },
    { type: 'bind', source: './conf', target: '/conf' },
    { type: 'tmpfs', target: '/scratch' },
  ]);
  t.same(Object.keys(out.volumes), ['web_config-testhash', 'certs-testhash', 'db-test-testhash']);
  t.same(out.volumes['db-test-testhash'], { driver: 'local' });
});

t.test("the peer's backrest case: a volume path with subdirectories", async t => {
  const out = run(`
services:
  backrest:
    image: garethgeorge/backrest:v1.7.3
    restart: unless-stopped
    ports: [9898]
    environment: [BACKREST_PORT=9898, "TZ=\${TZ}"]
    volumes:
      - backrest/data:/data
      - backrest/config:/config
      - backrest/cache:/cache
      - /:/userdata:ro
volumes:
  backrest:
  backrest-cache:
`);
  t.same(out.services['backrest-testhash'].volumes, ['backrest-testhash/data:/data', 'backrest-testhash/config:/config', 'backrest-testhash/cache:/cache', '/:/userdata:ro']);
  t.same(out.services['backrest-testhash'].environment, ['BACKREST_PORT=9898', 'TZ=${TZ}'], 'interpolation is left to compose');
  t.same(Object.keys(out.volumes), ['backrest-testhash', 'backrest-cache-testhash']);
});

t.test('networks: top-level names, list and map references, aliases kept; default and the platform networks never renamed', async t => {
  const out = run(`
services:
  web:
    image: nginx:latest
    networks: [frontend, backend, dokploy-network, default]
  api:
    image: myapi:latest
    networks:
      frontend:
        aliases: [api]
        ipv4_address: 172.20.0.5
      berth-network:
        aliases: [apid]
  redis:
    image: redis:alpine
    networks:
      backend:
networks:
  frontend:
    driver: bridge
    driver_opts: { com.docker.network.driver.mtu: 1200 }
  backend: { driver: bridge, attachable: true }
  default: { driver: bridge }
  dokploy-network: { external: true }
`);
  t.same(out.services['web-testhash'].networks, ['frontend-testhash', 'backend-testhash', 'dokploy-network', 'default']);
  t.same(out.services['api-testhash'].networks, { 'frontend-testhash': { aliases: ['api'], ipv4_address: '172.20.0.5' }, 'berth-network': { aliases: ['apid'] } });
  t.same(out.services['redis-testhash'].networks, { 'backend-testhash': null });
  t.same(Object.keys(out.networks), ['frontend-testhash', 'backend-testhash', 'default', 'dokploy-network']);
  t.same(out.networks['frontend-testhash'], { driver: 'bridge', driver_opts: { 'com.docker.network.driver.mtu': 1200 } });
});

t.test("the platform network kept is the configured one (platformNetwork), with default and the peer's dokploy-network", async t => {
  const file = 'services:\n  web:\n    image: x\n    networks: [edge-net, berth-network, dokploy-network, default]\nnetworks:\n  edge-net: { external: true }\n  berth-network: { external: true }\n';
  const out = run(file, S, 'edge-net');
  t.same(out.services['web-testhash'].networks, ['edge-net', 'berth-network-testhash', 'dokploy-network', 'default'], 'berth-network is an ordinary network when the platform network is another');
  t.same(Object.keys(out.networks), ['edge-net', 'berth-network-testhash']);
});

t.test('configs and secrets: top-level names and references in short and long form', async t => {
  const out = run(`
services:
  web:
    image: nginx:latest
    configs:
      - web_config
      - source: app_config
        target: /etc/app.json
    secrets:
      - db_password
      - source: api_key
        target: api_key.txt
configs:
  web_config: { file: ./web-config.yml }
  app_config: { file: ./app-config.json }
secrets:
  db_password: { file: ./db_password.txt }
  api_key: { environment: API_KEY }
`);
  const web = out.services['web-testhash'];
  t.same(web.configs, ['web_config-testhash', { source: 'app_config-testhash', target: '/etc/app.json' }]);
  t.same(web.secrets, ['db_password-testhash', { source: 'api_key-testhash', target: 'api_key.txt' }]);
  t.same(out.configs, { 'web_config-testhash': { file: './web-config.yml' }, 'app_config-testhash': { file: './app-config.json' } });
  t.same(out.secrets, { 'db_password-testhash': { file: './db_password.txt' }, 'api_key-testhash': { environment: 'API_KEY' } });
});

t.test('an external volume, network, config or secret keeps its real name (the engine finds it by name)', async t => {
  const out = run(`
services:
  app: { image: x }
volumes:
  db_data: { external: true }
  named: { external: true, name: the-real-one }
networks:
  outside: { external: true }
configs:
  special-config: { external: true }
secrets:
  db_password: { external: true }
`);
  t.same(out.volumes, { 'db_data-testhash': { external: true, name: 'db_data' }, 'named-testhash': { external: true, name: 'the-real-one' } });
  t.same(out.networks, { 'outside-testhash': { external: true, name: 'outside' } });
  t.same(out.configs, { 'special-config-testhash': { external: true, name: 'special-config' } });
  t.same(out.secrets, { 'db_password-testhash': { external: true, name: 'db_password' } });
});

t.test("the peer's whole-file case 1: every section at once", async t => {
  const out = run(`
version: "3.8"
services:
  web:
    image: nginx:latest
    container_name: web_container
    depends_on: [app]
    networks: [frontend]
    volumes_from: [data]
    links: [db]
    extends: { service: base_service }
    configs:
      - source: web_config
  app: { image: node:14, networks: [backend, frontend] }
  db: { image: postgres:13, networks: [backend] }
  data: { image: busybox, volumes: [/data] }
  base_service: { image: base:latest }
networks:
  frontend: { driver: bridge }
  backend: { driver: bridge }
volumes:
  web_data: { driver: local }
configs:
  web_config: { file: ./web_config.yml }
secrets:
  db_password: { file: ./db_password.txt }
`);
  t.same(out, {
    version: '3.8',
    services: {
      'web-testhash': {
        image: 'nginx:latest',
        container_name: 'web_container-testhash',
        depends_on: ['app-testhash'],
        networks: ['frontend-testhash'],
        volumes_from: ['data-testhash'],
        links: ['db-testhash'],
        extends: { service: 'base_service-testhash' },
        configs: [{ source: 'web_config-testhash' }],
      },
      'app-testhash': { image: 'node:14', networks: ['backend-testhash', 'frontend-testhash'] },
      'db-testhash': { image: 'postgres:13', networks: ['backend-testhash'] },
      'data-testhash': { image: 'busybox', volumes: ['/data'] },
      'base_service-testhash': { image: 'base:latest' },
    },
    networks: { 'frontend-testhash': { driver: 'bridge' }, 'backend-testhash': { driver: 'bridge' } },
    volumes: { 'web_data-testhash': { driver: 'local' } },
    configs: { 'web_config-testhash': { file: './web_config.yml' } },
    secrets: { 'db_password-testhash': { file: './db_password.txt' } },
  });
});

t.test("the peer's whole-file case 2: a volume and a service with the same name", async t => {
  const out = run(`
services:
  frontend:
    image: nginx:latest
    depends_on: [backend]
    networks: [public]
    volumes_from: [logs]
    links: [cache]
    extends: { service: shared_service }
    secrets: [db_password]
  backend: { image: node:14, networks: [private, public] }
  cache: { image: redis:latest, networks: [private] }
  logs: { image: busybox, volumes: [/logs] }
  shared_service: { image: shared:latest }
networks:
  public: { driver: bridge }
  private: { driver: bridge }
volumes:
  logs: { driver: local }
configs:
  app_config: { file: ./app_config.yml }
secrets:
  db_password: { file: ./db_password.txt }
`);
  const f = out.services['frontend-testhash'];
  t.same(
    [f.depends_on, f.networks, f.volumes_from, f.links, f.extends, f.secrets],
    [['backend-testhash'], ['public-testhash'], ['logs-testhash'], ['cache-testhash'], { service: 'shared_service-testhash' }, ['db_password-testhash']],
  );
  t.same(Object.keys(out.volumes), ['logs-testhash']);
  t.same(Object.keys(out.configs), ['app_config-testhash']);
});

t.test('anchors and merge keys: a shared definition gets the suffix once', async t => {
  const out = run(`
x-common: &common
  depends_on: [db]
  networks: &nets [back]
services:
  a:
    <<: *common
    image: a
  b:
    <<: *common
    image: b
  c:
    image: c
    networks: *nets
  db: { image: postgres, networks: [back] }
networks:
  back: {}
`);
  t.same(out['x-common'], { depends_on: ['db-testhash'], networks: ['back-testhash'] });
  t.same(out.services['a-testhash'].depends_on, ['db-testhash']);
  t.same(out.services['c-testhash'].networks, ['back-testhash']);
});

t.test('a suffix that is not a name is refused', async t => {
  t.throws(() => addSuffix('services: {a: {image: x}}', 'bad suffix', 'berth-network'), /may hold only letters/);
  t.throws(() => addSuffix('services: {a: {image: x}}', '../x', 'berth-network'), /may hold only letters/);
});
