// Domains served for real by the caddy provider: Caddy (Debian's package, built locally) runs as
// a Swarm service on the platform network with host-mode ports; an application deployed through
// the API answers through it by Host header; path prefixes, https with Caddy's internal issuer,
// redirects, basic auth, a certificate over ACME from pebble, reload, deletion — and the preflight.
import t, { type Test } from 'tap';
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { startTestServer, signUpAdmin, freePort, waitFor, TEST_BASE_IMAGE, TEST_CADDY_IMAGE, TEST_PEBBLE_IMAGE, runFinished } from '@berth/core/testing';
import { alive } from '@berth/test/remote-hosts';
import { startTestDns } from './dns-server.ts';
import { peerCertificate, through } from './http-through.ts';

t.setTimeout(600_000);
const docker = new Docker();
const run = promisify(execFile);
const tag = randomBytes(3).toString('hex');
const PROXY = `berth-test-proxy-${tag}`;
const PEBBLE = `berth-test-pebble-${tag}`;

// Index pages that say which path they are: / and /x/, plus the task's hostname.
const SITE = 'mkdir -p /www/x /www/v1/x && echo "root of $HOSTNAME" > /www/index.html && echo "x page" > /www/x/index.html && echo "v1 x page" > /www/v1/x/index.html && exec httpd -f -p 3000 -h /www';

t.test('domains through Caddy, live', async t => {
  // Pebble, Let's Encrypt's test CA, on the platform network as "pebble" (the name its certificate has).
  const caRoot = path.join(os.tmpdir(), `berth-test-pebble-ca-${tag}.pem`);
  await writeFile(caRoot, (await run('docker', ['run', '--rm', TEST_PEBBLE_IMAGE, 'cat', '/etc/pebble/ca.pem'])).stdout);
  const httpPort = await freePort();
  const httpsPort = await freePort();
  // Also asked by pebble, from its container through the engine's gateway, when it validates a challenge.
  const dns = await startTestDns({ 'preflight.test': '127.0.0.1', 'elsewhere.test': '10.9.9.9' }, '0.0.0.0');
  const gateway = ((await docker.getNetwork('docker_gwbridge').inspect()) as { IPAM: { Config: { Gateway: string }[] } }).IPAM.Config[0]!.Gateway;
  const server = await startTestServer({
    // The proxy reaches Berth's own API (assignDomainServer) through the engine's gateway.
    host: '0.0.0.0',
    proxy: 'caddy',
    proxyImage: TEST_CADDY_IMAGE,
    proxyHttpPort: httpPort,
    proxyHttpsPort: httpsPort,
    serverIp: '127.0.0.1',
    dnsResolver: dns.server,
    providers: { proxy: { caddy: { options: { serviceName: PROXY, acmeCa: 'https://pebble:14000/dir', acmeCaRoot: caRoot, acmeEmail: 'ops@example.com' } } } },
  });
  const services: string[] = [PROXY, PEBBLE];
  t.teardown(async () => {
    for (const name of services)
      await docker
        .getService(name)
        .remove()
        .catch(() => undefined);
    await server.destroy();
    await dns.close();
  });
  // The platform network is made by Berth on first use.
  await server.kernel.container.cradle.hosts.local();
  // A pebble left by a run that was killed still answers as "pebble" on the platform network (the
  // alias its certificate names), and asks a DNS server that is gone: Caddy would reach either.
  const pebbles = (await docker.listServices({ filters: JSON.stringify({ label: ['berth.test=domain'] }) })) as { ID: string; Spec: { Name: string; Labels?: Record<string, string> } }[];
  for (const stale of pebbles.filter(s => s.Spec.Name.startsWith('berth-test-pebble-') && !alive(Number(s.Spec.Labels?.['berth.test.owner']))))
    await docker
      .getService(stale.ID)
      .remove()
      .catch(() => undefined);
  await docker.createService({
    Name: PEBBLE,
    Labels: { 'berth.test': 'domain', 'berth.test.owner': String(process.pid) },
    TaskTemplate: {
      // Challenges are really validated: pebble resolves the host with the test DNS server and fetches
      // the http-01 token from port 80 of the address it finds (the proxy's task).
      ContainerSpec: {
        Image: TEST_PEBBLE_IMAGE,
        Args: ['pebble', '-config', '/etc/pebble/pebble-config.json', '-dnsserver', `${gateway}:${dns.port}`],
        Env: ['PEBBLE_VA_NOSLEEP=1', 'PEBBLE_WFE_NONCEREJECT=0'],
        Init: true,
        StopGracePeriod: 1_000_000_000,
      },
      Networks: [{ Target: 'berth-network', Aliases: ['pebble'] }],
    },
    EndpointSpec: { Mode: 'dnsrr' },
  } as never);

  const { client } = await signUpAdmin(server);
  const call = async (op: string, input: Record<string, unknown>) => {
    const res = await client.post(op, input);
    if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const { environment } = await call('project.create', { name: 'Sites' });
  /** A deployed application serving SITE. */
  const site = async (t: Test) => {
    const app = (await call('application.create', { name: 'site', environmentId: environment.environmentId })) as { applicationId: string; appName: string };
    services.push(app.appName);
    await call('application.update', { applicationId: app.applicationId, command: 'sh', args: ['-c', SITE], stopGracePeriodSwarm: 1_000_000_000 });
    await call('application.saveDockerProvider', { applicationId: app.applicationId, dockerImage: TEST_BASE_IMAGE });
    const done = await runFinished(client, 'application.deploy', { applicationId: app.applicationId });
    t.equal(done.status, 'done', done.errorMessage ?? 'deployed');
    return app;
  };
  // Every subtest adds domains of its own hosts to this application, and removes what it changes on
  // it; a subtest that changes the whole application (basic auth, deletion) deploys one of its own.
  const app = await site(t);

  const answers = (what: string, port: number, host: string, at: string, ok: (a: NonNullable<Awaited<ReturnType<typeof through>>>) => boolean, o: { tls?: boolean; auth?: string } = {}) =>
    waitFor(
      what,
      async () => {
        const a = await through(port, host, at, o);
        return a && ok(a) ? a : undefined;
      },
      { timeout: 30_000, interval: 250 },
    );

  t.test('a domain routes by Host header to the deployed application', async t => {
    const created = await call('domain.create', { host: 'web.test', applicationId: app.applicationId, port: 3000 });
    t.match(created, {
      host: 'web.test',
      https: false,
      port: 3000,
      path: '/',
      internalPath: '/',
      stripPath: false,
      certificateType: 'none',
      applicationId: app.applicationId,
      composeId: null,
      domainType: 'application',
      uniqueConfigKey: Number,
    });
    const a = await answers('web.test through the proxy', httpPort, 'web.test', '/', r => r.status === 200);
    t.match(a.body, /^root of /, 'the application answers');
    const other = await through(httpPort, 'nobody.test', '/');
    t.equal(other?.status, 404, 'an unknown host: 404');
    t.match(other?.body, /No domain of this proxy matches nobody\.test/, 'saying why');
  });

  t.test('a path prefix is stripped; an internal path is added', async t => {
    const stripped = await call('domain.create', { host: 'paths.test', path: '/api', stripPath: true, applicationId: app.applicationId, port: 3000 });
    const a = await answers('/api/x/ stripped to /x/', httpPort, 'paths.test', '/api/x/', r => r.status === 200);
    t.equal(a.body.trim(), 'x page');
    await call('domain.update', { domainId: stripped.domainId, host: 'paths.test', internalPath: '/v1' });
    const b = await answers('/api/x/ → /v1/x/', httpPort, 'paths.test', '/api/x/', r => r.status === 200 && /v1/.test(r.body));
    t.equal(b.body.trim(), 'v1 x page');
    const dup = await client.post('domain.create', { host: 'PATHS.test', path: '/api', applicationId: app.applicationId });
    t.equal(dup.status, 409, 'the same host and path twice: 409');
    await call('domain.delete', { domainId: stripped.domainId });
    await answers('/api/x/ no longer routed', httpPort, 'paths.test', '/api/x/', r => r.status === 404);
  });

  t.test("https with Caddy's internal issuer; plain http redirects to https", async t => {
    await call('domain.create', { host: 'secure.test', https: true, certificateType: 'none', applicationId: app.applicationId, port: 3000 });
    const redirect = await answers('http → https', httpPort, 'secure.test', '/x/', r => r.status === 301);
    t.equal(redirect.headers.location, 'https://secure.test/x/');
    const cert = await waitFor('a TLS handshake for secure.test', () => peerCertificate(httpsPort, 'secure.test'), { timeout: 30_000, interval: 250 });
    t.match(cert.issuer.CN, /Caddy Local Authority/, `issued by Caddy's internal CA (${cert.issuer.CN})`);
    t.match(cert.subjectaltname, /DNS:secure\.test/);
    const a = await answers('https body', httpsPort, 'secure.test', '/x/', r => r.status === 200, { tls: true });
    t.equal(a.body.trim(), 'x page');
  });

  t.test('a redirect answers its status and Location', async t => {
    await call('domain.create', { host: 'redirect.test', applicationId: app.applicationId, port: 3000 });
    t.equal(await call('redirects.create', { applicationId: app.applicationId, regex: '^http://redirect\\.test/old/(.*)', replacement: 'http://redirect.test/new/${1}', permanent: true }), true);
    const [r] = (await client.get('application.one', { applicationId: app.applicationId })).body.redirects;
    t.match(r, { regex: '^http://redirect\\.test/old/(.*)', permanent: true, applicationId: app.applicationId, uniqueConfigKey: Number }, 'application.one lists it');
    const a = await answers('a 301', httpPort, 'redirect.test', '/old/page?q=1', x => x.status === 301);
    t.equal(a.headers.location, 'http://redirect.test/new/page?q=1');
    await call('redirects.update', { redirectId: r.redirectId, regex: '^http://redirect\\.test/old/(.*)', replacement: 'http://redirect.test/moved/$1', permanent: false });
    const b = await answers('a 302', httpPort, 'redirect.test', '/old/page', x => x.status === 302);
    t.equal(b.headers.location, 'http://redirect.test/moved/page');
    t.same((await client.get('redirects.one', { redirectId: r.redirectId })).body.replacement, 'http://redirect.test/moved/$1');
    await call('redirects.delete', { redirectId: r.redirectId });
    await answers('no redirect once deleted', httpPort, 'redirect.test', '/old/page', x => x.status === 404);
  });

  t.test('basic auth: 401, then 200 with the right user', async t => {
    const app = await site(t); // basic auth holds for every domain of its application
    await call('domain.create', { host: 'auth.test', applicationId: app.applicationId, port: 3000 });
    await answers('auth.test open', httpPort, 'auth.test', '/', r => r.status === 200);
    t.equal(await call('security.create', { applicationId: app.applicationId, username: 'ann', password: 'open sesame' }), true);
    const [user] = (await client.get('application.one', { applicationId: app.applicationId })).body.security;
    t.match(user, { username: 'ann', password: 'open sesame', applicationId: app.applicationId }, 'application.one lists it');
    const denied = await answers('401 without credentials', httpPort, 'auth.test', '/', r => r.status === 401);
    t.match(String(denied.headers['www-authenticate']), /Basic/);
    t.equal((await through(httpPort, 'auth.test', '/', { auth: 'ann:wrong' }))?.status, 401, 'a wrong password: 401');
    const ok = await through(httpPort, 'auth.test', '/', { auth: 'ann:open sesame' });
    t.equal(ok?.status, 200, 'the right user: 200');
    const sealed = await server.kernel.container.cradle.orm.em.fork().getConnection().execute('select password_sealed, password_hash_sealed from securities');
    t.notMatch(JSON.stringify(sealed), /open sesame|\$2[aby]\$/, 'neither the password nor its hash is stored in plain text');
    await call('security.update', { securityId: user.securityId, username: 'ann', password: 'new secret' });
    await answers('the new password works', httpPort, 'auth.test', '/', r => r.status === 200, { auth: 'ann:new secret' });
    await call('security.delete', { securityId: user.securityId });
    await answers('open again', httpPort, 'auth.test', '/', r => r.status === 200);
  });

  t.test('a letsencrypt domain gets its certificate over ACME from pebble, the http-01 challenge validated', async t => {
    // The host points at the proxy's task on the platform network, where pebble reaches its port 80.
    const tasks = (await docker.listTasks({ filters: JSON.stringify({ service: [PROXY], 'desired-state': ['running'] }) })) as {
      NetworksAttachments?: { Network: { Spec: { Name: string } }; Addresses: string[] }[];
    }[];
    const address = tasks
      .flatMap(task => task.NetworksAttachments ?? [])
      .find(a => a.Network.Spec.Name === 'berth-network')
      ?.Addresses[0]?.split('/')[0];
    t.ok(address, `the proxy's address on the platform network (${address})`);
    dns.records['acme.test'] = address!;
    const d = await call('domain.create', { host: 'acme.test', https: true, certificateType: 'letsencrypt', applicationId: app.applicationId, port: 3000 });
    const cert = await waitFor(
      'a certificate from pebble',
      async () => {
        const c = await peerCertificate(httpsPort, 'acme.test');
        return c && /Pebble/i.test(String(c.issuer.CN ?? '')) ? c : undefined;
      },
      { timeout: 90_000, interval: 500 },
    );
    t.match(cert.subjectaltname, /DNS:acme\.test/, `issued by ${cert.issuer.CN}`);
    const one = await client.get('domain.one', { domainId: d.domainId });
    const state = one.body.preflight.checks.find((c: { check: string }) => c.check === 'certificate');
    t.equal(state.ok, true, state.reason);
    t.match(state.reason, /valid until/);
  });

  t.test('an uploaded certificate is served for its host (certificateType custom)', async t => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'berth-cert-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
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
      '30',
      '-subj',
      '/CN=custom.test',
      '-addext',
      'subjectAltName=DNS:custom.test',
    ]);
    const cert = await call('certificates.create', { name: 'custom', certificateData: await readFile(path.join(dir, 'c.pem'), 'utf8'), privateKey: await readFile(path.join(dir, 'k.pem'), 'utf8') });
    await call('domain.create', { host: 'custom.test', https: true, certificateType: 'custom', applicationId: app.applicationId, port: 3000 });
    const served = await waitFor(
      'the uploaded certificate',
      async () => {
        const c = await peerCertificate(httpsPort, 'custom.test');
        return c && c.fingerprint256 && String(c.subject.CN) === 'custom.test' && /custom\.test/.test(String(c.issuer.CN)) ? c : undefined;
      },
      { timeout: 30_000, interval: 250 },
    );
    t.equal(String(served.issuer.CN), 'custom.test', 'self-signed, as uploaded');
    const a = await answers('https with it', httpsPort, 'custom.test', '/x/', r => r.status === 200, { tls: true });
    t.equal(a.body.trim(), 'x page');
    await call('certificates.remove', { certificateId: cert.certificateId });
  });

  t.test('a certificate that cannot be obtained says why in the preflight', async t => {
    // fail.test resolves nowhere: the CA cannot validate it, and Caddy's own error reaches domain.one.
    const d = await call('domain.create', { host: 'fail.test', https: true, certificateType: 'letsencrypt', applicationId: app.applicationId, port: 3000 });
    let last = '';
    const check = await waitFor(
      'the certificate check failing with a reason',
      async () => {
        const one = await client.get('domain.one', { domainId: d.domainId });
        const c = one.body.preflight.checks.find((x: { check: string }) => x.check === 'certificate');
        last = c.reason;
        return c.ok === false ? c : undefined;
      },
      { timeout: 150_000, interval: 1000 },
    ).catch(async e => {
      const logs = execFileSync('docker', ['service', 'logs', '--tail', '20', PROXY], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      throw new Error(`${(e as Error).message}; last reason: ${last}; proxy log: ${logs}`);
    });
    t.match(check.reason, /^Caddy could not obtain a certificate for fail\.test: .*resolve/i, check.reason);
    await call('domain.delete', { domainId: d.domainId });
  });

  t.test('the preflight says what is right and what is not', async t => {
    const { domainId } = await call('domain.create', { host: 'preflight.test', applicationId: app.applicationId, port: 3000 });
    await answers('preflight.test through the proxy', httpPort, 'preflight.test', '/', r => r.status === 200);
    const one = await client.get('domain.one', { domainId });
    t.equal(one.status, 200);
    const by = Object.fromEntries(one.body.preflight.checks.map((c: { check: string }) => [c.check, c]));
    t.equal(by.dns.ok, true, by.dns.reason);
    t.equal(by.proxyPort.ok, true, by.proxyPort.reason);
    t.equal(by.workload.ok, true, by.workload.reason);
    t.equal(one.body.preflight.ok, true);
    const elsewhere = await call('domain.create', { host: 'elsewhere.test', applicationId: app.applicationId });
    const bad = (await client.get('domain.one', { domainId: elsewhere.domainId })).body.preflight;
    t.equal(bad.ok, false);
    t.match(bad.checks.find((c: { check: string }) => c.check === 'dns').reason, /resolves to 10\.9\.9\.9, not to this server \(127\.0\.0\.1\)/);
    const missing = await call('domain.validateDomain', { domain: 'missing.test' });
    t.equal(missing.isValid, false);
    t.match(missing.error, /does not resolve/);
    const valid = await call('domain.validateDomain', { domain: 'preflight.test' });
    t.match(valid, { isValid: true, resolvedIp: '127.0.0.1' });
  });

  t.test("Berth's own API at a domain (assignDomainServer)", async t => {
    const settings = await call('settings.assignDomainServer', { host: 'berth.test', certificateType: 'none' });
    t.match(settings, { proxy: 'caddy', host: 'berth.test', https: false, certificateType: 'none' });
    const a = await answers('Berth through the proxy', httpPort, 'berth.test', '/api/settings.getWebServerSettings', r => r.status === 401);
    t.match(JSON.parse(a.body), { code: 'UNAUTHORIZED' }, 'Berth itself answers (no credential: 401)');
    t.match((await client.get('settings.getWebServerSettings')).body, { host: 'berth.test' });
    await call('settings.assignDomainServer', { host: null, certificateType: 'none' });
    await answers('no longer', httpPort, 'berth.test', '/api/settings.getWebServerSettings', r => r.status === 404);
  });

  t.test('a reload keeps the routes', async t => {
    await call('domain.create', { host: 'reload.test', applicationId: app.applicationId, port: 3000 });
    await answers('reload.test before the reload', httpPort, 'reload.test', '/', r => r.status === 200);
    const { cradle } = server.kernel.container;
    const provider = cradle.providers.get('proxy', 'caddy');
    const before = ((await docker.getService(PROXY).inspect()) as { Version: { Index: number } }).Version.Index;
    await provider.reload({ docker, network: 'berth-network', labels: { 'berth.kind': 'proxy', 'berth.id': 'proxy', 'berth.organization': '' } });
    t.ok(((await docker.getService(PROXY).inspect()) as { Version: { Index: number } }).Version.Index > before, 'the service was updated (new task)');
    const a = await answers('reload.test after the reload', httpPort, 'reload.test', '/', r => r.status === 200);
    t.match(a.body, /^root of /);
  });

  t.test('removing the domain stops the routing; deleting the workload removes its routes', async t => {
    const app = await site(t);
    const plain = await call('domain.create', { host: 'gone.test', applicationId: app.applicationId, port: 3000 });
    await call('domain.create', { host: 'gone-secure.test', https: true, certificateType: 'none', applicationId: app.applicationId, port: 3000 });
    await answers('gone.test routed', httpPort, 'gone.test', '/', r => r.status === 200);
    await answers('gone-secure.test routed', httpsPort, 'gone-secure.test', '/x/', r => r.status === 200, { tls: true });
    await call('domain.delete', { domainId: plain.domainId });
    const gone = await answers('gone.test no longer routed', httpPort, 'gone.test', '/', r => r.status === 404);
    t.match(gone.body, /No domain of this proxy matches gone\.test/);
    t.equal((await through(httpsPort, 'gone-secure.test', '/x/', { tls: true }))?.status, 200, 'the other domains stay');
    await call('application.delete', { applicationId: app.applicationId });
    // No route is left for it: plain http no longer redirects, and Caddy holds no certificate for it.
    await answers('gone-secure.test gone with its workload', httpPort, 'gone-secure.test', '/x/', r => r.status === 404);
    t.equal(await peerCertificate(httpsPort, 'gone-secure.test'), undefined, 'no TLS handshake for it any more');
    t.same((await client.get('domain.byApplicationId', { applicationId: app.applicationId })).status, 404, 'the application is gone');
  });
});
