// The traefik provider's files, by content and by parsing them back as YAML: the names, order and
// TLS settings the peer's own Traefik tests pin (router per entry point, redirect-to-https only on
// the web router of an https domain, strip before add, redirects, auth, custom middlewares,
// custom entry points, certResolver), the shared middlewares file and the layout. Punycode hosts:
// the domain plugin's tests (routes arrive here in ASCII).
// No Traefik binary can run on our machines.
import t from 'tap';
import { mkdtemp, readFile, rm, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import type { ProxyRoute, ProxyWorkloadConfig } from '@berth/core';
import { proxyRoute as route } from '@berth/core/testing';
import traefik, { TraefikProxy, workloadFile, mergeMiddlewares, type FileConfig } from '../src/index.ts';

const workload = (routes: ProxyRoute[], over: Partial<ProxyWorkloadConfig> = {}): ProxyWorkloadConfig => ({ appName: 'test', routes, redirects: [], basicAuth: [], ...over });
const redirect = (n: number) => ({ redirectId: `r${n}`, uniqueConfigKey: n, regex: '^http://a/(.*)', replacement: 'http://b/$1', permanent: true });
const routers = (w: ProxyWorkloadConfig) => workloadFile(w)!.http!.routers!;
const web = (w: ProxyWorkloadConfig) => routers(w)['test-router-1']!;
const secure = (w: ProxyWorkloadConfig) => routers(w)['test-router-websecure-1']!;

t.test('routers on the web entry point', async t => {
  const plain = web(workload([route()]));
  t.same(plain, { rule: 'Host(`example.com`)', service: 'test-service-1', middlewares: [], entryPoints: ['web'] }, 'an http domain');
  t.equal(routers(workload([route()]))['test-router-websecure-1'], undefined, 'no websecure router for http');
  t.equal(web(workload([route({ path: '/foo' })])).rule, 'Host(`example.com`) && PathPrefix(`/foo`)');
  const redirects = web(workload([route()], { redirects: [redirect(1), redirect(2)] }));
  t.same(redirects.middlewares, ['redirect-test-1', 'redirect-test-2'], 'redirects, no redirect-to-https');
  const https = web(workload([route({ https: true })], { redirects: [redirect(1)] }));
  t.same(https.middlewares, ['redirect-to-https'], "an https domain's web router only redirects to https");
  t.equal(https.tls, undefined);
  t.same(web(workload([route({ middlewares: ['auth@file', 'rate-limit@file'] })])).middlewares, ['auth@file', 'rate-limit@file'], 'custom middlewares');
  t.same(web(workload([route({ https: true, middlewares: ['auth@file'] })])).middlewares, ['redirect-to-https'], 'not on the redirecting router');
  t.same(web(workload([route({ middlewares: ['auth@file'] })], { redirects: [redirect(1)] })).middlewares, ['redirect-test-1', 'auth@file'], 'redirects before custom middlewares');
  t.same(web(workload([route({ middlewares: [] })])).middlewares, [], 'an empty list');
});

t.test('routers on websecure, TLS', async t => {
  const w = workload([route({ https: true, certificateType: 'letsencrypt' })], { redirects: [redirect(1)], basicAuth: [{ username: 'ann', passwordHash: '$2a$10$abc' }] });
  t.same(
    secure(w),
    { rule: 'Host(`example.com`)', service: 'test-service-1', middlewares: ['redirect-test-1', 'auth-test'], entryPoints: ['websecure'], tls: { certResolver: 'letsencrypt' } },
    'redirects and auth on the websecure router, certResolver letsencrypt',
  );
  t.equal(secure(workload([route({ https: true, certificateType: 'none' })])).tls, undefined, "none: Traefik's default certificate");
  t.same(secure(workload([route({ https: true, certificateType: 'custom', customCertResolver: 'myresolver' })])).tls, { certResolver: 'myresolver' });
  t.equal(secure(workload([route({ https: true, certificateType: 'custom' })])).tls, undefined, 'custom without a resolver: an uploaded certificate, matched by name');
});

t.test('custom entry points', async t => {
  const http = routers(workload([route({ customEntrypoint: 'custom' })]))['test-router-1']!;
  t.same(http.entryPoints, ['custom']);
  t.notOk(http.middlewares.includes('redirect-to-https'));
  t.equal(http.tls, undefined);
  const https = routers(workload([route({ customEntrypoint: 'custom', https: true, certificateType: 'letsencrypt' })]));
  t.same(Object.keys(https), ['test-router-1'], 'no websecure router');
  t.same(https['test-router-1']!.entryPoints, ['custom']);
  t.notOk(https['test-router-1']!.middlewares.includes('redirect-to-https'));
  t.same(https['test-router-1']!.tls, { certResolver: 'letsencrypt' });
  t.equal(routers(workload([route({ customEntrypoint: 'custom', path: '/api' })]))['test-router-1']!.rule, 'Host(`example.com`) && PathPrefix(`/api`)');
  t.same(routers(workload([route({ customEntrypoint: 'custom', https: true, certificateType: 'custom', customCertResolver: 'myresolver' })]))['test-router-1']!.tls, { certResolver: 'myresolver' });
});

t.test('path middlewares: strip before add', async t => {
  const both = web(workload([route({ path: '/public', stripPath: true, internalPath: '/app' })]));
  t.same(both.middlewares, ['stripprefix-test-1', 'addprefix-test-1']);
  t.same(web(workload([route({ path: '/', stripPath: true })])).middlewares, [], 'nothing to strip at /');
  t.same(web(workload([route({ path: '/x', internalPath: '/x' })])).middlewares, [], 'no addprefix when the paths are the same');
  const shared = mergeMiddlewares(
    null,
    workload([route({ path: '/public', stripPath: true, internalPath: '/app' })], { redirects: [redirect(7)], basicAuth: [{ username: 'ann', passwordHash: '$2a$10$abc' }] }),
  );
  t.same(shared.http!.middlewares, {
    'redirect-to-https': { redirectScheme: { scheme: 'https', permanent: true } },
    'retry-upstream': { retry: { attempts: 25, initialInterval: '100ms' } },
    'addprefix-test-1': { addPrefix: { prefix: '/app' } },
    'stripprefix-test-1': { stripPrefix: { prefixes: ['/public'] } },
    'redirect-test-7': { redirectRegex: { regex: '^http://a/(.*)', replacement: 'http://b/$1', permanent: true } },
    'auth-test': { basicAuth: { removeHeader: true, users: ['ann:$2a$10$abc'] } },
  });
  const other = mergeMiddlewares(shared, { ...workload([]), appName: 'test-two' });
  t.ok(other.http!.middlewares!['auth-test'], 'another workload (whose name starts the same) leaves them');
  const cleared = mergeMiddlewares(shared, workload([]));
  t.same(Object.keys(cleared.http!.middlewares!), ['redirect-to-https', 'retry-upstream'], 'a workload without domains leaves nothing');
});

t.test("the upstream: the service's VIP by default, as the peer writes it; tasks.<appName> for hosts without IPVS", async t => {
  t.equal((traefik.options as unknown as { properties: { upstreamHost: { default: string } } }).properties.upstreamHost.default, 'service', 'the provider option upstreamHost defaults to service');
  const url = (upstream?: 'service' | 'tasks') => workloadFile(workload([route({ port: 8080 })]), upstream)!.http!.services!['test-service-1']!.loadBalancer.servers[0]!.url;
  t.equal(url(), 'http://test:8080', "the peer's http://<appName>:<port>");
  t.equal(url('service'), 'http://test:8080');
  t.equal(url('tasks'), 'http://tasks.test:8080', 'tasks: DNS round robin over the tasks');
});

t.test("the files, in the peer's layout, parse back", async t => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'berth-traefik-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const proxy = new TraefikProxy(
    { serviceName: 'unused', acmeEmail: 'ops@example.com', upstreamHost: 'tasks' },
    { dataDir, image: 'traefik:v3.5', httpPort: 80, httpsPort: 443, network: 'berth-network' },
  );
  const dir = proxy.configDir;
  const w = workload([route({ https: true, certificateType: 'letsencrypt' }), route({ uniqueConfigKey: 2, host: 'b.example.com', path: '/api', stripPath: true })], { redirects: [redirect(3)] });
  await proxy.applyWorkload(w);
  const main = parse(await readFile(path.join(dir, 'traefik.yml'), 'utf8'));
  t.same(main.entryPoints.web, { address: ':80', http: { middlewares: ['retry-upstream@file'] } }, 'every router on web: a request no task answered is sent again');
  t.same(main.entryPoints.websecure.http, { tls: { certResolver: 'letsencrypt' }, middlewares: ['retry-upstream@file'] });
  t.same(main.providers.file, { directory: '/etc/dokploy/traefik/dynamic', watch: true });
  t.same(main.certificatesResolvers.letsencrypt.acme, { email: 'ops@example.com', storage: '/etc/dokploy/traefik/dynamic/acme.json', httpChallenge: { entryPoint: 'web' } });
  const app = parse(await readFile(path.join(dir, 'dynamic', 'test.yml'), 'utf8')) as FileConfig;
  t.same(Object.keys(app.http!.routers!), ['test-router-1', 'test-router-websecure-1', 'test-router-2']);
  t.same(app.http!.services!['test-service-2'], { loadBalancer: { servers: [{ url: 'http://tasks.test:3000' }], passHostHeader: true } });
  const mw = parse(await readFile(path.join(dir, 'dynamic', 'middlewares.yml'), 'utf8')) as FileConfig;
  t.same(Object.keys(mw.http!.middlewares!), ['redirect-to-https', 'retry-upstream', 'stripprefix-test-2', 'redirect-test-3']);
  await proxy.writeCertificate({ certificateId: 'c', certificatePath: 'cert-1', certificateData: '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----', privateKey: 'KEY' });
  const cert = parse(await readFile(path.join(dir, 'dynamic', 'certificates', 'cert-1', 'certificate.yml'), 'utf8'));
  t.same(cert, { tls: { certificates: [{ certFile: '/etc/dokploy/traefik/dynamic/certificates/cert-1/chain.crt', keyFile: '/etc/dokploy/traefik/dynamic/certificates/cert-1/privkey.key' }] } });
  t.same((await readdir(path.join(dir, 'dynamic', 'certificates', 'cert-1'))).sort(), ['certificate.yml', 'chain.crt', 'privkey.key']);
  await proxy.removeWorkload('test');
  t.notOk(existsSync(path.join(dir, 'dynamic', 'test.yml')), 'a workload without domains has no file');
  t.same(Object.keys((parse(await readFile(path.join(dir, 'dynamic', 'middlewares.yml'), 'utf8')) as FileConfig).http!.middlewares!), ['redirect-to-https', 'retry-upstream']);
  t.throws(() => proxy.validateFile('dynamic/x.yml', 'http:\n  routers: [unclosed'), { name: 'YAMLParseError', message: /Flow sequence/ }, 'YAML is checked before a write');
});
