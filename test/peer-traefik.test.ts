// What Berth writes for Traefik equals what the peer writes, for a set of domains (http, https
// with letsencrypt, a custom resolver, paths with strip/add prefix, a custom entry point,
// middlewares, "" in the nullable fields, redirects, basic auth) on an application and on compose
// stacks: Berth started as an operator coming from the peer would (proxy traefik, platformNetwork
// dokploy-network), its files and converted compose files compared, as parsed YAML documents,
// with the expected files in test/fixtures/peer-traefik/ (written from the peer's writers at
// v0.30.2; each names the source lines it follows). No Traefik binary runs here: a stand-in image
// holds the proxy service, and the files are what is compared.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import bcrypt from 'bcryptjs';
import Docker from 'dockerode';
import { parse } from 'yaml';
import { startTestServer, signUpAdmin, freePort, TEST_STATIC_IMAGE } from '@berth/core/testing';

t.setTimeout(300_000);
const docker = new Docker();
const PROXY = `berth-test-peer-traefik-${randomBytes(3).toString('hex')}`;
const fixture = (name: string, values: Record<string, string | number>) =>
  parse(
    readFileSync(new URL(`./fixtures/peer-traefik/${name}`, import.meta.url), 'utf8').replace(/\{\{(\w+)\}\}/g, (_, k: string) => {
      if (!(k in values)) throw new Error(`${name}: no value for {{${k}}}`);
      return String(values[k]);
    }),
  );

/** A compose service's labels as Traefik reads them: a map (a list of key=value, or a map). */
const labelMap = (labels: unknown): Record<string, string> =>
  Array.isArray(labels) ? Object.fromEntries(labels.map((l: string) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)])) : { ...(labels as Record<string, string>) };
const networksOf = (service: { networks?: string[] | Record<string, unknown> }) => (Array.isArray(service.networks) ? service.networks : Object.keys(service.networks ?? {})).sort();

t.test('Traefik files and compose labels as the peer writes them', async t => {
  const server = await startTestServer({
    proxy: 'traefik',
    proxyImage: TEST_STATIC_IMAGE,
    proxyHttpPort: await freePort(),
    proxyHttpsPort: await freePort(),
    platformNetwork: 'dokploy-network',
    providers: { proxy: { traefik: { options: { serviceName: PROXY } } } },
  });
  t.teardown(async () => {
    await docker
      .getService(PROXY)
      .remove()
      .catch(() => undefined);
    await server.destroy();
  });
  const { client } = await signUpAdmin(server);
  const call = async (op: string, input: Record<string, unknown>) => {
    const res = await client.post(op, input);
    if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const dir = path.join(server.dataDir, 'proxy', 'traefik');
  const { environment } = await call('project.create', { name: 'Peer' });
  const environmentId = environment.environmentId;

  t.test("an application's domains, redirect and basic auth: traefik.yml, dynamic/<appName>.yml, dynamic/middlewares.yml", async t => {
    const app = await call('application.create', { name: 'shop', environmentId });
    const applicationId = app.applicationId;
    await call('redirects.create', { applicationId, regex: '^http://a\\.example\\.com/old/(.*)', replacement: 'http://a.example.com/new/$1', permanent: true });
    await call('security.create', { applicationId, username: 'ann', password: 'open sesame' });
    const {
      redirects: [redirect],
    } = await call('application.one', { applicationId });
    const domains: Record<string, unknown>[] = [
      { host: 'a.example.com', port: 3000 },
      { host: 'b.example.com', port: 3000, https: true, certificateType: 'letsencrypt' },
      { host: 'c.example.com', port: 8080, https: true, certificateType: 'custom', customCertResolver: 'myresolver' },
      { host: 'd.example.com', port: 3000, path: '/api', stripPath: true, internalPath: '/v1' },
      { host: 'e.example.com', port: 3000, customEntrypoint: 'internal', https: true, certificateType: 'letsencrypt' },
      { host: 'f.example.com', port: 3000, middlewares: ['ratelimit@file'] },
      { host: 'g.example.com', port: 3000, customCertResolver: '', customEntrypoint: '', internalPath: '', serviceName: '' },
    ];
    const keys: Record<string, number> = {};
    for (const [i, d] of domains.entries()) keys[`d${i + 1}`] = (await call('domain.create', { ...d, applicationId })).uniqueConfigKey;
    const blank = await call('domain.one', { domainId: (await call('domain.byApplicationId', { applicationId })).find((d: { host: string }) => d.host === 'g.example.com').domainId });
    t.match(blank, { customCertResolver: '', customEntrypoint: '', internalPath: '', serviceName: '' }, '"" is stored and answered as sent');

    const middlewares = parse(readFileSync(path.join(dir, 'dynamic', 'middlewares.yml'), 'utf8'));
    const [user] = middlewares.http.middlewares[`auth-${app.appName}`].basicAuth.users as string[];
    const hash = user!.slice('ann:'.length);
    t.ok(bcrypt.compareSync('open sesame', hash), 'the basic-auth user is "ann:<a bcrypt hash of the password>"');
    const values = { app: app.appName, ...keys, r1: redirect.uniqueConfigKey, hash };

    // Berth's one addition to the peer's files (issue 51): a request no task answered is sent again, on every router of both entry points.
    const main = parse(readFileSync(path.join(dir, 'traefik.yml'), 'utf8'));
    for (const entryPoint of ['web', 'websecure']) {
      t.same(main.entryPoints[entryPoint].http.middlewares, ['retry-upstream@file'], `${entryPoint}: Berth's retry-upstream middleware`);
      delete main.entryPoints[entryPoint].http.middlewares;
      if (!Object.keys(main.entryPoints[entryPoint].http).length) delete main.entryPoints[entryPoint].http;
    }
    t.same(middlewares.http.middlewares['retry-upstream'], { retry: { attempts: 25, initialInterval: '100ms' } }, 'retry-upstream in dynamic/middlewares.yml');
    delete middlewares.http.middlewares['retry-upstream'];
    t.same(main, fixture('traefik.yml', values), 'traefik.yml (its docker provider on dokploy-network)');
    t.same(
      parse(readFileSync(path.join(dir, 'dynamic', `${app.appName}.yml`), 'utf8')),
      fixture('application.yml', values),
      'dynamic/<appName>.yml: the routers, their middlewares and TLS, and services at http://<appName>:<port> (the "" domain as if nothing were set)',
    );
    t.same(middlewares, fixture('middlewares.yml', values), 'dynamic/middlewares.yml');
  });

  const file = 'services:\n  web:\n    image: berth-test/busybox:1\n  worker:\n    image: berth-test/busybox:1\n    networks: [backend]\nnetworks:\n  backend: {}\n';
  for (const [type, name, where] of [
    ['docker-compose', 'compose-docker.yml', 'labels'],
    ['stack', 'compose-stack.yml', 'deploy.labels'],
  ] as const) {
    t.test(`a ${type} stack's domains: the converted file's ${where} and networks`, async t => {
      const stack = await call('compose.create', { name: `stack ${type}`, environmentId, composeType: type, composeFile: file });
      const composeId = stack.composeId;
      const routed: Record<string, unknown>[] = [
        { serviceName: 'web', host: `c1.example.com`, port: 3000 },
        { serviceName: 'web', host: `c2.example.com`, port: 3000, https: true, certificateType: 'letsencrypt', path: '/api', stripPath: true, internalPath: '/v1' },
        {
          serviceName: 'worker',
          host: `c3.example.com`,
          port: 8080,
          customEntrypoint: 'internal',
          https: true,
          certificateType: 'custom',
          customCertResolver: 'myresolver',
          middlewares: ['ratelimit@file'],
        },
        { serviceName: 'web', host: `c4.example.com`, port: 3000, https: true, certificateType: 'none' },
      ].map(d => ({ ...d, host: `${type}.${d.host}` }));
      const keys: Record<string, number> = {};
      for (const [i, d] of routed.entries()) keys[`c${i + 1}`] = (await call('domain.create', { ...d, composeId, domainType: 'compose' })).uniqueConfigKey;
      const converted = parse(await call('compose.getConvertedCompose', { composeId }));
      const expected = fixture(name, { compose: stack.appName, ...keys });
      // The fixture's hosts are the peer's for one stack; each stack here has hosts of its own.
      const hosts = (labels: Record<string, string>) => Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, v.replace(/Host\(`/, `Host(\`${type}.`)]));
      for (const service of ['web', 'worker']) {
        const own = type === 'stack' ? converted.services[service].deploy?.labels : converted.services[service].labels;
        const peer = type === 'stack' ? expected.services[service].deploy.labels : expected.services[service].labels;
        t.same(labelMap(own), hosts(labelMap(peer)), `${service}: the peer's routers, services, entry points, middlewares, TLS, traefik.enable and the network label`);
      }
      t.same(converted.networks, expected.networks, "the root declares dokploy-network external, as the peer does, and keeps the file's own");
      t.same(networksOf(converted.services.web), networksOf(expected.services.web), 'a service without networks: on dokploy-network and default');
      t.ok(networksOf(converted.services.worker).includes('dokploy-network'), 'a service with networks of its own joins dokploy-network too');
      t.notOk(existsSync(path.join(dir, 'dynamic', `${stack.appName}.yml`)), "no file of its own: the labels route it, as the peer's");
    });
  }
});
