// A workload's own Traefik file routes only its own domains to itself (issue 46): the file Berth
// writes passes, and each way of reaching past the workload is refused with a 400 naming where.
import t from 'tap';
import { stringify } from 'yaml';
import { assertOwnRoutes, parseRule } from '../src/own-routes.ts';

const own = { appName: 'shop-ab12', hosts: ['shop.example.com', 'www.shop.example.com'], upstreams: [] };
/** The file Berth writes for a domain with https (providers/proxy-traefik's workloadFile): the domain plugin's test reads one back for real. */
const berths = stringify({
  http: {
    routers: {
      'shop-ab12-router-7': { rule: 'Host(`shop.example.com`)', service: 'shop-ab12-service-7', middlewares: ['redirect-to-https'], entryPoints: ['web'] },
      'shop-ab12-router-websecure-7': { rule: 'Host(`shop.example.com`)', service: 'shop-ab12-service-7', middlewares: [], entryPoints: ['websecure'], tls: { certResolver: 'letsencrypt' } },
    },
    services: { 'shop-ab12-service-7': { loadBalancer: { servers: [{ url: 'http://shop-ab12:3000' }], passHostHeader: true } } },
  },
});

/** The issue paths of the refusal (none when accepted). */
function refusal(text: string): string[] {
  try {
    assertOwnRoutes(text, own);
    return [];
  } catch (e) {
    const err = e as { code?: string; issues?: { path: string[] }[] };
    if (err.code !== 'BAD_REQUEST') throw e;
    return (err.issues ?? []).map(i => i.path.join('.'));
  }
}

const file = (rule: string, url = `http://${own.appName}:3000`, extra = '') => `http:
  routers:
    shop-ab12-router-1:
      rule: "${rule}"
      service: shop-ab12-service-1
      entryPoints: [web]
  services:
    shop-ab12-service-1:
      loadBalancer:
        servers:
          - url: ${url}
${extra}`;

t.test("the file Berth writes for the workload passes, and the workload's own variations", async t => {
  t.same(refusal(berths), [], "Berth's own file");
  t.same(refusal(file('Host(`shop.example.com`)')), []);
  t.same(refusal(file('Host(`shop.example.com`) && PathPrefix(`/api`)')), [], 'a host and a path');
  t.same(refusal(file('(Host(`shop.example.com`) || Host(`www.shop.example.com`)) && !PathPrefix(`/admin`)')), [], 'both its hosts, a negated path');
  t.same(refusal(file('Host(`shop.example.com`)', `http://tasks.${own.appName}:3000`)), [], 'its tasks');
  t.same(refusal(''), [], 'an empty file');
});

t.test("routers that reach another tenant's host are refused, naming the rule", async t => {
  const at = ['traefikConfig.http.routers.shop-ab12-router-1.rule'];
  t.same(refusal(file('Host(`victim.example.net`)')), at, "another's host");
  t.same(refusal(file('Host(`shop.example.com`, `victim.example.net`)')), at, 'one of two');
  t.same(refusal(file('Host(`shop.example.com`) || PathPrefix(`/`)')), at, 'a branch with no host');
  t.same(refusal(file('!Host(`shop.example.com`)')), at, 'every host but its own');
  t.same(refusal(file('PathPrefix(`/`)')), at, 'no host at all');
  t.same(refusal(file('HostRegexp(`.+`)')), at, 'a host pattern');
  t.same(refusal(file('Host(`shop.example.com`')), at, 'an unreadable rule');
});

t.test("services that point at another workload, and names of another's, are refused", async t => {
  t.same(refusal(file('Host(`shop.example.com`)', 'http://tasks.other-cd34:80')), ['traefikConfig.http.services.shop-ab12-service-1.loadBalancer.servers.0']);
  t.same(refusal(file('Host(`shop.example.com`)', 'http://10.0.3.7:80')), ['traefikConfig.http.services.shop-ab12-service-1.loadBalancer.servers.0'], 'an address');
  const theirs = `http:\n  routers:\n    shop-ab12-router-1:\n      rule: "Host(\`shop.example.com\`)"\n      service: other-cd34-service-1\n`;
  t.same(refusal(theirs), ['traefikConfig.http.routers.shop-ab12-router-1.service'], "another workload's service");
  t.same(refusal(file('Host(`shop.example.com`)').replace(/shop-ab12-router-1/, 'other-cd34-router-1')), ['traefikConfig.http.routers.other-cd34-router-1'], "a router named as another's");
  t.same(refusal(`${file('Host(`shop.example.com`)')}tls:\n  stores:\n    default: {}\n`), ['traefikConfig.tls.stores'], "the proxy's default certificate");
  t.same(refusal('udp:\n  routers:\n    shop-ab12-u:\n      service: shop-ab12-s\n'), ['traefikConfig.udp.routers'], 'a udp router');
});

t.test('parseRule reads the rule language', async t => {
  t.same(parseRule('Host(`a`) && (Path(`/x`) || !Path(`/y`))'), {
    op: '&&',
    parts: [
      { call: 'Host', args: ['a'] },
      { op: '||', parts: [{ call: 'Path', args: ['/x'] }, { not: { call: 'Path', args: ['/y'] } }] },
    ],
  });
  t.throws(() => parseRule('Host(a)'), 'unquoted arguments are not read');
});
