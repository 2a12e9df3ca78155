// Workloads' routes → one Caddy JSON config (what `caddy run --config` and the admin API's /load
// take). Two servers: `web` on :80 serves plain-http domains and redirects https domains to
// https; `websecure` on :443 serves https domains with certificates from Caddy's internal issuer
// (certificateType none), an ACME CA (letsencrypt) or uploaded files (custom). A request no
// domain matches gets a 404 that says so, never Caddy's empty 200.
import type { ProxyBasicAuthUser, ProxyForwardAuth, ProxyRedirect, ProxyRoute, ProxyWorkloadConfig } from '@berth/core';

export interface CaddyAcme {
  /** The ACME directory URL. */
  ca: string;
  email: string | null;
  /** PEM files (paths inside the container) trusted for the ACME server's own TLS. */
  trustedRoots: string[];
}

export interface CaddyConfigInput {
  workloads: ProxyWorkloadConfig[];
  acme: CaddyAcme;
  /** Directory inside the container holding uploaded certificates (one sub-directory each). */
  certificatesDir: string;
  /** Whether any certificate was uploaded (then the directory is loaded). */
  hasCertificates: boolean;
  /** Caddy's admin endpoint inside the container. */
  adminListen: string;
}

type Json = Record<string, unknown>;

/** Traefik-style `$1` / `${1}` group references → Caddy's regexp placeholders. */
export function caddyReplacement(replacement: string, name: string): string {
  return replacement.replace(/\$\{(\d+)\}|\$(\d+)/g, (_m, a: string | undefined, b: string | undefined) => `{http.regexp.${name}.${a ?? b}}`);
}

function basicAuth(users: ProxyBasicAuthUser[]): Json {
  return {
    handler: 'authentication',
    providers: {
      http_basic: {
        hash: { algorithm: 'bcrypt' },
        // Caddy 2.6 takes the bcrypt hash base64-encoded.
        accounts: users.map(u => ({ username: u.username, password: Buffer.from(u.passwordHash).toString('base64') })),
        realm: 'restricted',
      },
    },
  };
}

/**
 * Caddy's forward_auth (what the Caddyfile directive expands to): the request's method, URI and
 * headers are asked of Berth first; its 2xx answer lets the request on with the copied headers set
 * (each one always set, so a client cannot bring its own), any other answer (401, a 302 to the
 * sign-in page) goes back to the client as it is. Berth's session cookie is then taken out of the
 * request: the workload never sees a credential of Berth.
 */
function forwardAuth(f: ProxyForwardAuth): Json[] {
  const cookie = f.cookie.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [
    {
      handle: [
        {
          handler: 'reverse_proxy',
          upstreams: [{ dial: f.upstream }],
          rewrite: { method: 'GET', uri: f.uri },
          headers: { request: { set: { 'X-Forwarded-Method': ['{http.request.method}'], 'X-Forwarded-Uri': ['{http.request.uri}'] } } },
          handle_response: [
            { match: { status_code: [2] }, routes: [{ handle: [{ handler: 'headers', request: { set: Object.fromEntries(f.copyHeaders.map(h => [h, [`{http.reverse_proxy.header.${h}}`]])) } }] }] },
          ],
        },
      ],
    },
    { handle: [{ handler: 'headers', request: { replace: { Cookie: [{ search_regexp: `(^|;\\s*)${cookie}=[^;]*`, replace: '' }] } } }] },
  ];
}

function redirectRoutes(redirects: ProxyRedirect[]): Json[] {
  if (!redirects.length) return [];
  // The regex applies to the full URL, as the peer's redirectregex middleware does.
  const out: Json[] = [{ handle: [{ handler: 'vars', berth_url: '{http.request.scheme}://{http.request.host}{http.request.uri}' }] }];
  for (const r of redirects) {
    const name = `redirect${r.uniqueConfigKey}`;
    out.push({
      match: [{ vars_regexp: { berth_url: { name, pattern: r.regex } } }],
      handle: [{ handler: 'static_response', status_code: r.permanent ? 301 : 302, headers: { Location: [caddyReplacement(r.replacement, name)] } }],
      terminal: true,
    });
  }
  return out;
}

function pathMatch(route: ProxyRoute): Json {
  const host = { host: [route.host] };
  if (route.path === '/' || route.path === '') return host;
  const p = route.path.replace(/\/+$/, '');
  return { ...host, path: [p, `${p}/*`] };
}

/** How long and how often a request is tried again on the workload's tasks (see proxyHandlers); measured by bench/deploy-load.ts. */
export const UPSTREAM_RETRY = { try_duration: '5s', try_interval: '100ms' };

function proxyHandlers(w: ProxyWorkloadConfig, route: ProxyRoute): Json[] {
  const steps: Json[] = route.forwardAuth ? forwardAuth(route.forwardAuth) : [];
  if (w.basicAuth.length) steps.push({ handle: [basicAuth(w.basicAuth)] });
  steps.push(...redirectRoutes(w.redirects));
  const prefix = route.path.replace(/\/+$/, '');
  if (route.stripPath && prefix) steps.push({ handle: [{ handler: 'rewrite', strip_path_prefix: prefix }] });
  const internal = route.internalPath.replace(/\/+$/, '');
  if (internal) steps.push({ handle: [{ handler: 'rewrite', uri: `${internal}{http.request.uri}` }] });
  const upstream = route.serviceName ?? w.appName;
  steps.push({
    handle: [
      route.upstream
        ? { handler: 'reverse_proxy', upstreams: [{ dial: route.upstream }] }
        : {
            handler: 'reverse_proxy',
            // The task addresses, looked up again every second: a redeploy's new tasks are found
            // without a config change, and no service VIP (IPVS) is needed.
            dynamic_upstreams: { source: 'a', name: `tasks.${upstream}`, port: String(route.port), refresh: '1s' },
            // A redeploy without downtime (issue 51): a task without a health check is in DNS once
            // its container started, maybe before its app listens, and a stop-first one leaves no
            // task for a moment; a refused dial (and, for a GET, a connection lost before any
            // answer) is tried again on a task found then, for up to 5 s, instead of a 502/503.
            load_balancing: UPSTREAM_RETRY,
          },
    ],
  });
  return [{ match: [pathMatch(route)], handle: [{ handler: 'subroute', routes: steps }], terminal: true }];
}

const byPathLength = (a: { route: ProxyRoute }, b: { route: ProxyRoute }) => b.route.path.length - a.route.path.length;

const notFound = (): Json => ({ handle: [{ handler: 'static_response', status_code: 404, body: 'No domain of this proxy matches {http.request.host}{http.request.uri.path} (Berth)\n' }] });

/** The whole config, deterministic for the same input. */
export function caddyConfig(input: CaddyConfigInput): Json {
  const all = input.workloads.flatMap(w => w.routes.map(route => ({ w, route }))).sort(byPathLength);
  const plain = all.filter(r => !r.route.https);
  const secure = all.filter(r => r.route.https);
  const web: Json[] = [
    ...secure.map(({ route }) => ({
      match: [pathMatch(route)],
      handle: [{ handler: 'static_response', status_code: 301, headers: { Location: ['https://{http.request.host}{http.request.uri}'] } }],
      terminal: true,
    })),
    ...plain.flatMap(({ w, route }) => proxyHandlers(w, route)),
    notFound(),
  ];
  const websecure: Json[] = [...secure.flatMap(({ w, route }) => proxyHandlers(w, route)), notFound()];
  const hosts = (type: string) => [...new Set(secure.filter(r => r.route.certificateType === type).map(r => r.route.host))];
  const policies: Json[] = [];
  const internal = hosts('none');
  if (internal.length) policies.push({ subjects: internal, issuers: [{ module: 'internal' }] });
  const acme = hosts('letsencrypt');
  if (acme.length) {
    policies.push({
      subjects: acme,
      issuers: [
        {
          module: 'acme',
          ca: input.acme.ca,
          ...(input.acme.email ? { email: input.acme.email } : {}),
          ...(input.acme.trustedRoots.length ? { trusted_roots_pem_files: input.acme.trustedRoots } : {}),
        },
      ],
    });
  }
  const custom = hosts('custom');
  const tls: Json = { automation: { policies } };
  if (input.hasCertificates) tls.certificates = { load_folders: [input.certificatesDir] };
  return {
    admin: { listen: input.adminListen },
    apps: {
      http: {
        http_port: 80,
        https_port: 443,
        servers: {
          web: { listen: [':80'], routes: web, automatic_https: { disable_redirects: true } },
          websecure: {
            listen: [':443'],
            routes: websecure,
            // Uploaded certificates are used as they are; Caddy obtains none for their hosts.
            automatic_https: { disable_redirects: true, ...(custom.length ? { skip_certificates: custom } : {}) },
          },
        },
      },
      ...(policies.length || input.hasCertificates ? { tls } : {}),
      // The internal issuer's root stays out of the proxy container's own trust store: nothing in
      // that container is its client. Left to install it, Caddy ran update-ca-certificates at every
      // load of a configuration with an internal-issuer host (its system pool, read once, never
      // shows the root as trusted), and each reload waited for it.
      ...(internal.length ? { pki: { certificate_authorities: { local: { install_trust: false } } } } : {}),
    },
  };
}
