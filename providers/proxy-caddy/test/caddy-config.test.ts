// The JSON configuration the caddy provider writes, read as data (Caddy itself runs it in the domain
// plugin's caddy-live test).
import t from 'tap';
import type { ProxyRoute } from '@berth/core';
import { proxyRoute } from '@berth/core/testing';
import { caddyConfig, type CaddyConfigInput } from '../src/caddy-config.ts';

const route = (host: string, over: Partial<ProxyRoute> = {}): ProxyRoute => proxyRoute({ domainId: `d-${host}`, host, ...over });
const input = (routes: ProxyRoute[]): CaddyConfigInput => ({
  workloads: [{ appName: 'site', routes, redirects: [], basicAuth: [] }],
  acme: { ca: 'https://acme.invalid/dir', email: null, trustedRoots: [] },
  certificatesDir: '/etc/caddy/certificates',
  hasCertificates: false,
  adminListen: 'localhost:2019',
});

t.test("an https host on Caddy's internal issuer: the issuer's root is not installed into the proxy's own trust store", async t => {
  const apps = caddyConfig(input([route('secure.test', { https: true })])).apps as Record<string, unknown>;
  t.same(apps.pki, { certificate_authorities: { local: { install_trust: false } } }, 'install_trust off for the local authority');
  t.match(apps.tls, { automation: { policies: [{ subjects: ['secure.test'], issuers: [{ module: 'internal' }] }] } });
});

t.test('no internal-issuer host: no pki app at all', async t => {
  const plain = caddyConfig(input([route('plain.test')])).apps as Record<string, unknown>;
  t.notOk('pki' in plain, 'plain http');
  const acme = caddyConfig(input([route('acme.test', { https: true, certificateType: 'letsencrypt' })])).apps as Record<string, unknown>;
  t.notOk('pki' in acme, 'an ACME host only');
});

/** Every reverse_proxy handler of the config, wherever it is nested. */
const reverseProxies = (config: unknown): Record<string, unknown>[] => {
  if (Array.isArray(config)) return config.flatMap(reverseProxies);
  if (!config || typeof config !== 'object') return [];
  const o = config as Record<string, unknown>;
  return [...(o.handler === 'reverse_proxy' ? [o] : []), ...Object.values(o).flatMap(reverseProxies)];
};

t.test("a workload's tasks: looked up every second, a refused dial tried again on a task found then (a redeploy without failed requests)", async t => {
  t.same(reverseProxies(caddyConfig(input([route('site.test')]))), [
    { handler: 'reverse_proxy', dynamic_upstreams: { source: 'a', name: 'tasks.site', port: '3000', refresh: '1s' }, load_balancing: { try_duration: '5s', try_interval: '100ms' } },
  ]);
  t.same(
    reverseProxies(caddyConfig(input([route('berth.test', { upstream: '127.0.0.1:3000' })]))),
    [{ handler: 'reverse_proxy', upstreams: [{ dial: '127.0.0.1:3000' }] }],
    'a fixed upstream (Berth itself): as it is',
  );
});
