// domain.*, certificates.* and the settings proxy operations through the real kernel and a real
// PostgreSQL, with the traefik provider active (its files are read back and parsed; no Traefik
// binary runs here), and one server with caddy active for the Traefik-named operations' 400.
import t from 'tap';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, symlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { parse } from 'yaml';
import { startTestServer, signUpAdmin, otherOrganization, freePort, Client, TEST_STATIC_IMAGE } from '@berth/core/testing';

t.setTimeout(300_000);
const docker = new Docker();
const run = promisify(execFile);
const PROXY = `berth-test-traefik-${randomBytes(3).toString('hex')}`;
const fields = (body: { issues?: { path: (string | number)[] }[] }) => (body.issues ?? []).map(i => i.path.join('.'));

/** A self-signed certificate and its key, made by openssl (argument arrays). */
async function selfSigned(cn: string, days: number): Promise<{ cert: string; key: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-cert-'));
  try {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      path.join(dir, 'k.pem'),
      '-out',
      path.join(dir, 'c.pem'),
      '-days',
      String(days),
      '-subj',
      `/CN=${cn}`,
      '-addext',
      `subjectAltName=DNS:${cn},DNS:www.${cn}`,
    ]);
    return { cert: await readFile(path.join(dir, 'c.pem'), 'utf8'), key: await readFile(path.join(dir, 'k.pem'), 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

t.test('domains with the traefik provider', async t => {
  const server = await startTestServer({
    proxy: 'traefik',
    // Traefik cannot run here: a stand-in image holds the service (its files are what is tested).
    proxyImage: TEST_STATIC_IMAGE,
    proxyHttpPort: await freePort(),
    proxyHttpsPort: await freePort(),
    serverIp: '127.0.0.1',
    providers: { proxy: { traefik: { options: { serviceName: PROXY, acmeEmail: 'ops@example.com' } } } },
  });
  t.teardown(async () => {
    await docker
      .getService(PROXY)
      .remove()
      .catch(() => undefined);
    await server.destroy();
  });
  const { client, userId, token } = await signUpAdmin(server);
  const call = async (op: string, input: Record<string, unknown>) => {
    const res = await client.post(op, input);
    if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const { environment } = await call('project.create', { name: 'Shop' });
  const dir = path.join(server.dataDir, 'proxy', 'traefik');
  type App = { applicationId: string; appName: string; name: string };
  // Each subtest builds what it reads: an application of its own, with a domain when given one (so its file exists).
  const shop = async (domain?: Record<string, unknown>) => {
    const app = (await call('application.create', { name: 'shop', environmentId: environment.environmentId })) as App;
    const created = domain ? ((await call('domain.create', { applicationId: app.applicationId, ...domain })) as { domainId: string }) : undefined;
    return { app, domainId: created?.domainId ?? '', file: path.join(dir, 'dynamic', `${app.appName}.yml`) };
  };

  t.test('bad input names the field', async t => {
    const { app, file } = await shop();
    const bad = async (input: Record<string, unknown>, field: string, status = 400) => {
      const res = await client.post('domain.create', { host: 'a.example.com', applicationId: app.applicationId, ...input });
      t.equal(res.status, status, `${JSON.stringify(input)}: ${status}`);
      if (status === 400) t.ok(fields(res.body).includes(field), `names ${field} (got ${fields(res.body).join(', ')}: ${res.body.message})`);
    };
    await bad({ host: '' }, 'host');
    await bad({ host: 'not a host' }, 'host');
    await bad({ port: 70000 }, 'port');
    await bad({ path: 'no-slash' }, 'path');
    await bad({ certificateType: 'acme' }, 'certificateType');
    // The peer accepts a certificate type while https is off, and ignores it: so does Berth.
    const plain = await client.post('domain.create', { host: 'plain.example.com', applicationId: app.applicationId, https: false, certificateType: 'letsencrypt' });
    t.equal(plain.status, 200, `https off with a certificate type: 200 (${JSON.stringify(plain.body)})`);
    t.match(plain.body, { https: false, certificateType: 'letsencrypt' }, 'stored as given');
    const routers = Object.values(parse(await readFile(file, 'utf8')).http.routers as Record<string, { rule: string; entryPoints: string[]; tls?: unknown }>).filter(r =>
      r.rule.includes('plain.example.com'),
    );
    t.same(
      routers.map(r => [r.entryPoints, r.tls ?? null]),
      [[['web'], null]],
      'routed on web only, with no certificate: the type is ignored while https is off',
    );
    await bad({ applicationId: undefined }, 'applicationId');
    await bad({ applicationId: 'nope' }, '', 404);
    await bad({ applicationId: undefined, composeId: 'c1' }, '', 404);
    t.equal((await client.get('domain.one', { domainId: 'nope' })).status, 404);
  });

  t.test("a domain writes the workload's file; punycode host; both variants read it", async t => {
    const { app, file: appFile } = await shop();
    const created = await call('domain.create', { host: 'тест.рф', path: '/shop', stripPath: true, https: true, certificateType: 'letsencrypt', applicationId: app.applicationId, port: 8080 });
    const domainId = created.domainId;
    t.same(
      Object.keys(created).sort(),
      [
        'applicationId',
        'certificateType',
        'composeId',
        'createdAt',
        'customCertResolver',
        'customEntrypoint',
        'domainId',
        'domainType',
        'enabled',
        'forwardAuthEnabled',
        'host',
        'https',
        'internalPath',
        'middlewares',
        'path',
        'port',
        'previewDeploymentId',
        'serviceName',
        'stripPath',
        'uniqueConfigKey',
      ],
      "the peer's fields",
    );
    const n = created.uniqueConfigKey;
    const file = parse(await readFile(appFile, 'utf8'));
    t.same(file.http.routers[`${app.appName}-router-${n}`], {
      rule: 'Host(`xn--e1aybc.xn--p1ai`) && PathPrefix(`/shop`)',
      service: `${app.appName}-service-${n}`,
      middlewares: ['redirect-to-https'],
      entryPoints: ['web'],
    });
    t.same(file.http.routers[`${app.appName}-router-websecure-${n}`].middlewares, [`stripprefix-${app.appName}-${n}`]);
    t.same(file.http.routers[`${app.appName}-router-websecure-${n}`].tls, { certResolver: 'letsencrypt' });
    t.same(
      file.http.services[`${app.appName}-service-${n}`],
      { loadBalancer: { servers: [{ url: `http://${app.appName}:8080` }], passHostHeader: true } },
      "by default the service's VIP, as the peer writes it (upstreamHost service)",
    );
    const owner = { applicationId: app.applicationId, appName: app.appName, name: app.name };
    const rest = await client.get('domain.byApplicationId', { applicationId: app.applicationId });
    t.same(rest.body, [{ ...created, application: owner }], 'each with its application joined, as the peer answers');
    const trpc = await client.trpc('query', 'domain.byApplicationId', { applicationId: app.applicationId });
    t.same(trpc.body.result.data.json, [{ ...created, application: owner }], 'tRPC answers the same');
    t.same((await client.get('application.one', { applicationId: app.applicationId })).body.domains, [created], 'application.one lists the domain');
    t.match(await client.get('domain.byComposeId', { composeId: 'anything' }), { status: 404, body: { code: 'NOT_FOUND' } }, 'an unknown compose stack is not found, as the peer answers');
    const one = await client.get('domain.one', { domainId });
    t.match(one.body, { ...created, application: owner, preflight: { ok: Boolean, checks: Array } });
    const older = new Client(server.url, { token });
    const viaBearer = await older.get('domain.one', { domainId });
    t.equal(viaBearer.status, 200, 'the older variant (Authorization: Bearer) reads it too');
    t.equal(viaBearer.body.host, created.host);
    const updated = await call('domain.update', { domainId, host: 'shop.example.com', https: false, certificateType: 'none' });
    t.match(updated, { host: 'shop.example.com', https: false, path: '/shop', stripPath: true, port: 8080 }, 'update keeps what it is not given');
    const after = parse(await readFile(appFile, 'utf8'));
    t.same(Object.keys(after.http.routers), [`${app.appName}-router-${n}`], 'no websecure router once http');
    // The peer's enabled switches a domain off: the record stays, its routes go; on again, they come back.
    const off = await call('domain.update', { domainId, host: 'shop.example.com', enabled: false });
    t.match(off, { domainId, host: 'shop.example.com', enabled: false }, 'switched off, the record kept');
    const routersNow = async () => (existsSync(appFile) ? Object.keys(parse(await readFile(appFile, 'utf8'))?.http?.routers ?? {}) : []);
    t.same(await routersNow(), [], 'no route while off');
    t.equal((await client.get('domain.one', { domainId })).body.enabled, false, 'domain.one answers it off');
    t.match(await call('domain.update', { domainId, host: 'shop.example.com' }), { enabled: false }, 'an update without enabled keeps it off');
    t.same(await routersNow(), [], 'and makes no route');
    t.match(await call('domain.update', { domainId, host: 'shop.example.com', enabled: true }), { enabled: true });
    t.same(await routersNow(), [`${app.appName}-router-${n}`], 'on again: routed again');
    t.match(await call('domain.create', { host: 'dormant.example.com', applicationId: app.applicationId, enabled: false }), { enabled: false }, 'created off');
    t.same(await routersNow(), [`${app.appName}-router-${n}`], 'a domain created off makes no route');
  });

  t.test('organizations are isolated', async t => {
    const { app, domainId } = await shop({ host: 'isolated.example.com', path: '/shop' });
    const other = await otherOrganization(server, userId);
    t.equal((await other.client.get('domain.one', { domainId })).status, 404);
    t.equal((await other.client.post('domain.delete', { domainId })).status, 404);
    t.equal((await other.client.post('domain.create', { host: 'x.example.com', applicationId: app.applicationId })).status, 404);
    t.equal((await other.client.post('domain.create', { host: 'isolated.example.com', path: '/shop', applicationId: app.applicationId })).status, 404, 'not even a conflict is told');
    t.equal((await other.client.post('redirects.create', { applicationId: app.applicationId, regex: 'a', replacement: 'b', permanent: false })).status, 404);
    t.equal((await other.client.post('security.create', { applicationId: app.applicationId, username: 'x', password: 'y' })).status, 404);
    t.equal((await other.client.get('application.readTraefikConfig', { applicationId: app.applicationId })).status, 404);
  });

  t.test('generated domains', async t => {
    const { app } = await shop();
    const host = await call('domain.generateDomain', { appName: app.appName });
    t.match(host, new RegExp(`^${app.appName}-[0-9a-f]{6}-127-0-0-1\\.sslip\\.io$`));
    t.equal((await client.get('domain.canGenerateTraefikMeDomains', { serverId: '' })).body, '127.0.0.1', 'the configured address, as the peer answers');
  });

  t.test("settings: Traefik's files, confined to its directory", async t => {
    const { app } = await shop({ host: 'settings.example.com' });
    const main = (await client.get('settings.readTraefikConfig')).body;
    t.match(parse(main), { entryPoints: { web: { address: ':80' } } });
    t.same(parse((await client.get('settings.readMiddlewareTraefikConfig')).body).http.middlewares['redirect-to-https'], { redirectScheme: { scheme: 'https', permanent: true } });
    const broken = await client.post('settings.updateMiddlewareTraefikConfig', { traefikConfig: 'http: [unclosed' });
    t.equal(broken.status, 400);
    t.same(fields(broken.body), ['traefikConfig']);
    t.equal((await client.post('settings.updateWebServerTraefikConfig', { traefikConfig: 'http:\n  routers: {}\n' })).body, true);
    t.equal(await readFile(path.join(dir, 'dynamic', 'berth.yml'), 'utf8'), 'http:\n  routers: {}\n');
    t.equal((await client.get('settings.readTraefikFile', { path: `${dir}/dynamic/berth.yml` })).body, 'http:\n  routers: {}\n', 'an absolute path inside');
    t.equal((await client.get('settings.readTraefikFile', { path: 'dynamic/berth.yml' })).body, 'http:\n  routers: {}\n', 'a relative one');
    for (const outside of ['../../etc/passwd', '/etc/passwd', 'dynamic/../../x']) {
      const res = await client.get('settings.readTraefikFile', { path: outside });
      t.equal(res.status, 400, `${outside}: 400`);
      t.same(fields(res.body), ['path']);
    }
    symlinkSync('/etc', path.join(dir, 'dynamic', 'escape'));
    const link = await client.get('settings.readTraefikFile', { path: 'dynamic/escape/hostname' });
    t.equal(link.status, 400, 'a symbolic link leading out: 400');
    t.match(link.body.issues[0].message, /path: leads outside/);
    const write = await client.post('settings.updateTraefikFile', { path: 'dynamic/escape/berth-test', traefikConfig: 'a: 1\n' });
    t.equal(write.status, 400);
    t.notOk(existsSync('/etc/berth-test'), 'nothing was written outside');
    t.equal((await client.post('settings.updateTraefikFile', { path: 'dynamic/extra.yml', traefikConfig: 'http:\n  routers: {}\n' })).body, true);
    const tree = (await client.get('settings.readDirectories')).body as { name: string; children?: { name: string }[] }[];
    t.same(
      tree.map(e => e.name),
      ['dynamic', 'service.json', 'traefik.yml'].filter(n => n !== 'service.json' || existsSync(path.join(dir, n))),
    );
    t.ok(tree[0]!.children!.some(c => c.name === `${app.appName}.yml`));
    const own = await client.get('application.readTraefikConfig', { applicationId: app.applicationId });
    t.match(own.body, new RegExp(`${app.appName}-router-`));
    t.equal((await client.post('application.updateTraefikConfig', { applicationId: app.applicationId, traefikConfig: 'http: {' })).status, 400);
    // Traefik merges every file: a workload's own routes only its own domains, to itself (the file as Berth wrote it passes).
    t.equal((await client.post('application.updateTraefikConfig', { applicationId: app.applicationId, traefikConfig: own.body })).body, true, 'its own file, written back');
    const theirs = await client.post('application.updateTraefikConfig', {
      applicationId: app.applicationId,
      traefikConfig: own.body.replace(/Host\(`[^`]+`\)/g, 'Host(`another-tenant.example.net`)'),
    });
    t.equal(theirs.status, 400, "a router for another tenant's host: 400");
    t.match(fields(theirs.body)[0], /^traefikConfig\.http\.routers\..+\.rule$/, 'naming the rule');
    const elsewhere = await client.post('application.updateTraefikConfig', {
      applicationId: app.applicationId,
      traefikConfig: own.body.replace(/url: http:\/\/[^:]+:/g, 'url: http://tasks.another-app:'),
    });
    t.equal(elsewhere.status, 400, 'a service pointing at another workload: 400');
    t.match(fields(elsewhere.body)[0], /^traefikConfig\.http\.services\..+\.loadBalancer\.servers\.0$/);
    t.match((await client.get('application.readTraefikConfig', { applicationId: app.applicationId })).body, own.body, 'the refused files were not written');
    t.equal((await client.get('settings.haveTraefikDashboardPortEnabled')).body, false);
    t.same((await client.get('settings.getTraefikPorts')).body, []);
    t.match((await client.get('settings.getWebServerSettings')).body, { proxy: 'traefik', serverIp: '127.0.0.1', host: null });
    const ownDomain = await call('settings.assignDomainServer', { host: 'panel.example.com', certificateType: 'letsencrypt' });
    t.match(ownDomain, { host: 'panel.example.com', https: true, certificateType: 'letsencrypt' });
    const ws = parse(await readFile(path.join(dir, 'dynamic', 'berth.yml'), 'utf8'));
    t.same(ws.http.routers['berth-router-0'].middlewares, ['redirect-to-https'], "Berth's own domain in dynamic/berth.yml");
    t.same(ws.http.routers['berth-router-websecure-0'].tls, { certResolver: 'letsencrypt' });
    t.match(ws.http.services['berth-service-0'].loadBalancer.servers[0].url, /^http:\/\/\d+\.\d+\.\d+\.\d+:\d+$/, "to Berth through the engine's gateway");
    await call('settings.assignDomainServer', { host: null, certificateType: 'none' });
    t.notOk(existsSync(path.join(dir, 'dynamic', 'berth.yml')), 'taken away');
  });

  t.test("settings with a serverId: 404 for another organization's, 400 for a server (its proxy keeps no Traefik files); nothing is done to this machine's", async t => {
    const own = await call('server.create', { name: 'edge', ipAddress: '192.0.2.20', port: 22, username: 'root', sshKeyId: null });
    const other = await otherOrganization(server, userId);
    const theirs = (await other.client.post('server.create', { name: 'theirs', ipAddress: '192.0.2.21', port: 22, username: 'root', sshKeyId: null })).body.serverId as string;
    const before = await readFile(path.join(dir, 'traefik.yml'), 'utf8');
    const cases: [string, 'get' | 'post', Record<string, unknown>][] = [
      ['settings.readTraefikFile', 'get', { path: 'traefik.yml' }],
      ['settings.updateTraefikFile', 'post', { path: 'traefik.yml', traefikConfig: 'entryPoints: {}\n' }],
      ['settings.readDirectories', 'get', {}],
      ['settings.readTraefikEnv', 'get', {}],
      ['settings.writeTraefikEnv', 'post', { env: 'A=1' }],
      ['settings.reloadTraefik', 'post', {}],
      ['settings.toggleDashboard', 'post', { enableDashboard: true }],
      ['settings.haveTraefikDashboardPortEnabled', 'get', {}],
      ['settings.getTraefikPorts', 'get', {}],
      ['settings.updateTraefikPorts', 'post', { additionalPorts: [{ targetPort: 9000, publishedPort: 9000, protocol: 'tcp' }] }],
    ];
    for (const [op, method, input] of cases) {
      const foreign = await client[method](op, { ...input, serverId: theirs });
      t.equal(foreign.status, 404, `${op}: another organization's server is 404`);
      const onServer = await client[method](op, { ...input, serverId: own.serverId });
      t.equal(onServer.status, 400, `${op}: a server of the organization is 400`);
      t.same(fields(onServer.body), ['serverId'], `${op}: naming serverId`);
    }
    t.equal(await readFile(path.join(dir, 'traefik.yml'), 'utf8'), before, "this machine's files are untouched");
    t.same((await client.get('settings.getTraefikPorts')).body, [], 'and its settings');
    t.equal((await client.get('settings.haveTraefikDashboardPortEnabled')).body, false);
    t.equal((await client.post('server.remove', { serverId: own.serverId })).status, 200);
  });

  t.test("certificates: uploaded, sealed, written in the peer's layout, expiry announced", async t => {
    const events: { name: string; daysLeft: number }[] = [];
    server.kernel.container.cradle.events.on('certificateExpiring', p => void events.push(p));
    const { cert, key } = await selfSigned('shop.example.com', 10);
    const other = await selfSigned('other.example.com', 10);
    const mismatch = await client.post('certificates.create', { name: 'shop', certificateData: cert, privateKey: other.key });
    t.equal(mismatch.status, 400);
    t.same(fields(mismatch.body), ['privateKey']);
    t.same(fields((await client.post('certificates.create', { name: 'x', certificateData: 'nope', privateKey: key })).body), ['certificateData']);
    const created = await call('certificates.create', { name: 'shop', certificateData: cert, privateKey: key });
    t.match(created, { name: 'shop', subjects: ['shop.example.com', 'www.shop.example.com'], expiresAt: String, certificatePath: /^cert-[0-9a-f]{16}$/ });
    t.notOk('privateKey' in created, 'the key is never answered');
    const days = (Date.parse(created.expiresAt) - Date.now()) / 86_400_000;
    t.ok(days > 9 && days <= 10, `expiresAt is the leaf's notAfter (${days.toFixed(1)} days)`);
    const certDir = path.join(dir, 'dynamic', 'certificates', created.certificatePath);
    t.equal(await readFile(path.join(certDir, 'privkey.key'), 'utf8'), `${key.trim()}\n`);
    t.match(parse(await readFile(path.join(certDir, 'certificate.yml'), 'utf8')), {
      tls: { certificates: [{ certFile: `/etc/dokploy/traefik/dynamic/certificates/${created.certificatePath}/chain.crt` }] },
    });
    const stored = await server.kernel.container.cradle.orm.em.fork().getConnection().execute('select private_key_sealed from certificates');
    t.notMatch(JSON.stringify(stored), /PRIVATE KEY/, 'sealed in the database');
    await new Promise(r => setImmediate(r));
    t.match(events, [{ name: 'shop', daysLeft: 9 }], 'certificateExpiring: it ends within 30 days');
    t.same(
      (await client.get('certificates.all')).body.map((c: { certificateId: string }) => c.certificateId),
      [created.certificateId],
    );
    const longer = await selfSigned('shop.example.com', 90);
    const renewed = await call('certificates.update', { certificateId: created.certificateId, certificateData: longer.cert, privateKey: longer.key });
    t.ok(Date.parse(renewed.expiresAt) - Date.now() > 80 * 86_400_000, "update reads the new leaf's expiry");
    t.equal(await readFile(path.join(certDir, 'chain.crt'), 'utf8'), `${longer.cert.trim()}\n`, 'and writes the new chain');
    t.equal((await client.post('certificates.update', { certificateId: created.certificateId, privateKey: other.key })).status, 400, 'a key that does not match the stored chain');
    t.equal(await call('certificates.remove', { certificateId: created.certificateId }), true, 'remove answers true, as the peer does');
    t.equal((await client.get('certificates.one', { certificateId: created.certificateId })).status, 404);
    t.notOk(existsSync(certDir), 'its files are gone');
  });

  t.test('deleting the application removes its domains and its file', async t => {
    const { app, file } = await shop({ host: 'deleted.example.com' });
    await call('domain.create', { applicationId: app.applicationId, host: 'deleted.example.com', path: '/second' });
    t.ok(existsSync(file));
    const count = async () => (await server.kernel.container.cradle.orm.em.fork().getConnection().execute('select count(*)::int as n from domains where service_id = ?', [app.applicationId]))[0]!.n;
    t.equal(await count(), 2, 'two domains before');
    await call('application.delete', { applicationId: app.applicationId });
    t.notOk(existsSync(file), 'the file is gone');
    t.equal(await count(), 0, 'and its domains');
  });
});

t.test('with caddy active the Traefik-named operations answer 400 naming it', async t => {
  const server = await startTestServer({ proxy: 'caddy' });
  t.teardown(() => server.destroy());
  const { client } = await signUpAdmin(server);
  for (const [op, input] of [
    ['settings.readTraefikConfig', undefined],
    ['settings.readTraefikFile', { path: 'x' }],
    ['settings.reloadTraefik', {}],
    ['settings.updateTraefikPorts', { additionalPorts: [] }],
  ] as const) {
    const res = op.includes('read') ? await client.get(op, input as never) : await client.post(op, input as never);
    t.equal(res.status, 400, `${op}: 400`);
    t.match(res.body.message, /active proxy provider is "caddy"/);
  }
});

t.test('an unknown proxy provider stops the boot naming the enabled ones', async t => {
  await t.rejects(startTestServer({ proxy: 'nginx' }), /proxy \(BERTH_PROXY\) is "nginx", which is not an enabled proxy provider \(enabled: caddy, traefik; or "none"\)/);
});

t.test('a proxy that cannot run answers 503 with its reason, and the domain stays saved', async t => {
  const name = `berth-test-noproxy-${randomBytes(3).toString('hex')}`;
  const server = await startTestServer({
    proxy: 'caddy',
    // No such image on this host, and nothing can be pulled: the proxy never gets a task.
    proxyImage: 'berth-test/no-such-proxy:0',
    proxyHttpPort: await freePort(),
    proxyHttpsPort: await freePort(),
    providers: { proxy: { caddy: { options: { serviceName: name } } } },
  });
  t.teardown(async () => {
    await docker
      .getService(name)
      .remove()
      .catch(() => undefined);
    await server.destroy();
  });
  const { client } = await signUpAdmin(server);
  const { environment } = (await client.post('project.create', { name: 'P' })).body;
  const app = (await client.post('application.create', { name: 'web', environmentId: environment.environmentId })).body;
  const res = await client.post('domain.create', { host: 'down.example.com', applicationId: app.applicationId, port: 80 });
  t.equal(res.status, 503, `503, not 500 (${res.status} ${res.body.message})`);
  t.match(res.body.message, /^The proxy could not (start|apply the routes): .+What was saved stays saved/, "the proxy's reason, and that the record is kept");
  const listed = await client.get('domain.byApplicationId', { applicationId: app.applicationId });
  t.same(
    listed.body.map((d: { host: string }) => d.host),
    ['down.example.com'],
    'the domain is stored',
  );
});
