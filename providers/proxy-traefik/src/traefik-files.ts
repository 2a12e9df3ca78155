// Traefik's file-provider configuration in the peer's layout and names, from what a workload
// serves. Per workload, dynamic/<appName>.yml holds a router per domain on `web`
// (`<appName>-router-<n>`), one more on `websecure` for https domains
// (`<appName>-router-websecure-<n>`), and a service per domain (`<appName>-service-<n>`). The
// shared dynamic/middlewares.yml holds `redirect-to-https` and the workloads' middlewares:
// `redirect-<appName>-<n>` (redirectRegex), `auth-<appName>` (basicAuth), and the path ones
// `stripprefix-<appName>-<n>` and `addprefix-<appName>-<n>`, and a guarded domain's
// `forward-auth-<appName>-<n>` (forwardAuth, asking Berth). Middleware order on a router: the
// web router of an https domain only redirects; otherwise strip, add, redirects, auth, forward
// auth, then the domain's own middlewares. TLS: certResolver letsencrypt, a custom resolver, or none.
// A compose service's domain (a route with a serviceName) is not in these files: as the peer does,
// it is routed by the labels its converted compose file carries (the compose plugin writes them).
import type { ProxyRoute, ProxyWorkloadConfig } from '@berth/core';

/** The routes written to the files: not those of compose services, which their labels route. */
const fileRoutes = (w: ProxyWorkloadConfig) => w.routes.filter(d => !d.serviceName);

export interface HttpRouter {
  rule: string;
  service: string;
  middlewares: string[];
  entryPoints: string[];
  tls?: { certResolver: string };
}

export interface FileConfig {
  http?: {
    routers?: Record<string, HttpRouter>;
    services?: Record<string, { loadBalancer: { servers: { url: string }[]; passHostHeader: boolean } }>;
    middlewares?: Record<string, Record<string, unknown>>;
  };
  tls?: { certificates: { certFile: string; keyFile: string }[] };
}

/** How the service URL names the workload: its service name (needs a service VIP) or tasks.<name> (DNS round robin). */
export type UpstreamHost = 'service' | 'tasks';

function router(w: ProxyWorkloadConfig, d: ProxyRoute, entryPoint: string): HttpRouter {
  const { appName } = w;
  const n = d.uniqueConfigKey;
  const r: HttpRouter = {
    rule: `Host(\`${d.host}\`)${d.path && d.path !== '/' ? ` && PathPrefix(\`${d.path}\`)` : ''}`,
    service: `${appName}-service-${n}`,
    middlewares: [],
    entryPoints: [entryPoint],
  };
  if (entryPoint === 'web' && d.https && !d.customEntrypoint) {
    r.middlewares.push('redirect-to-https');
  } else {
    if (d.stripPath && d.path && d.path !== '/') r.middlewares.push(`stripprefix-${appName}-${n}`);
    if (d.internalPath && d.internalPath !== '/' && d.internalPath !== d.path) r.middlewares.push(`addprefix-${appName}-${n}`);
    for (const redirect of w.redirects) r.middlewares.push(`redirect-${appName}-${redirect.uniqueConfigKey}`);
    if (w.basicAuth.length) r.middlewares.push(`auth-${appName}`);
    // Before the domain's own middlewares, as the peer places its gate; Berth answers the sign-in redirect itself (no -errors middleware).
    if (d.forwardAuth) r.middlewares.push(`forward-auth-${appName}-${n}`);
    r.middlewares.push(...d.middlewares);
  }
  if (entryPoint === 'websecure' || (d.customEntrypoint && d.https)) {
    if (d.certificateType === 'letsencrypt') r.tls = { certResolver: 'letsencrypt' };
    else if (d.certificateType === 'custom' && d.customCertResolver) r.tls = { certResolver: d.customCertResolver };
  }
  return r;
}

/** dynamic/<appName>.yml of the workload (null when it has no domain: the file is removed). */
export function workloadFile(w: ProxyWorkloadConfig, upstream: UpstreamHost = 'service'): FileConfig | null {
  const routes = fileRoutes(w);
  if (!routes.length) return null;
  const routers: Record<string, HttpRouter> = {};
  const services: NonNullable<NonNullable<FileConfig['http']>['services']> = {};
  for (const d of routes) {
    const n = d.uniqueConfigKey;
    routers[`${w.appName}-router-${n}`] = router(w, d, d.customEntrypoint || 'web');
    if (!d.customEntrypoint && d.https) routers[`${w.appName}-router-websecure-${n}`] = router(w, d, 'websecure');
    const url = d.upstream ? `http://${d.upstream}` : `http://${upstream === 'tasks' ? `tasks.${w.appName}` : w.appName}:${d.port}`;
    services[`${w.appName}-service-${n}`] = { loadBalancer: { servers: [{ url }], passHostHeader: true } };
  }
  return { http: { routers, services } };
}

/** The names of the workload's middlewares in the shared file (to replace them as a whole). */
export function isWorkloadMiddleware(name: string, appName: string): boolean {
  const app = appName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^(?:(?:redirect|stripprefix|addprefix|forward-auth)-${app}-\\d+|auth-${app})$`).test(name);
}

/** The workload's middlewares for the shared file. */
export function workloadMiddlewares(w: ProxyWorkloadConfig): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  const { appName } = w;
  const routes = fileRoutes(w);
  for (const d of routes) {
    const n = d.uniqueConfigKey;
    if (d.internalPath && d.internalPath !== '/' && d.internalPath !== d.path) out[`addprefix-${appName}-${n}`] = { addPrefix: { prefix: d.internalPath } };
    if (d.stripPath && d.path && d.path !== '/') out[`stripprefix-${appName}-${n}`] = { stripPrefix: { prefixes: [d.path] } };
    if (d.forwardAuth)
      out[`forward-auth-${appName}-${n}`] = {
        forwardAuth: { address: `http://${d.forwardAuth.upstream}${d.forwardAuth.uri}`, trustForwardHeader: true, authResponseHeaders: d.forwardAuth.copyHeaders },
      };
  }
  for (const r of w.redirects) out[`redirect-${appName}-${r.uniqueConfigKey}`] = { redirectRegex: { regex: r.regex, replacement: r.replacement, permanent: r.permanent } };
  if (w.basicAuth.length) out[`auth-${appName}`] = { basicAuth: { removeHeader: true, users: w.basicAuth.map(u => `${u.username}:${u.passwordHash}`) } };
  return out;
}

/**
 * Berth's addition to the peer's files (issue 51): a request no task answered (a refused dial: a
 * task started but not listening yet, or one gone) is sent again, every 100-200 ms for about 5 s,
 * as the caddy provider's load_balancing does, so a redeploy fails no request. Both entry points
 * of traefik.yml apply it to every router, the compose stacks' labelled ones too.
 */
export const RETRY_MIDDLEWARE = 'retry-upstream';
const retryMiddleware = { retry: { attempts: 25, initialInterval: '100ms' } };

/** The shared middlewares file with the workload's entries replaced (none left when it has no routes). */
export function mergeMiddlewares(current: FileConfig | null, w: ProxyWorkloadConfig | { appName: string; routes: [] }): FileConfig {
  const middlewares: Record<string, Record<string, unknown>> = { 'redirect-to-https': { redirectScheme: { scheme: 'https', permanent: true } }, [RETRY_MIDDLEWARE]: retryMiddleware };
  for (const [name, m] of Object.entries(current?.http?.middlewares ?? {})) if (!isWorkloadMiddleware(name, w.appName)) middlewares[name] = m;
  if (w.routes.length) Object.assign(middlewares, workloadMiddlewares(w as ProxyWorkloadConfig));
  return { ...current, http: { ...current?.http, middlewares } };
}

export interface MainConfigInput {
  /** Where the dynamic files are inside the container. */
  dynamicDir: string;
  network: string;
  acmeEmail: string;
  acmeCa: string | null;
}

/** traefik.yml, the static configuration (the peer's production one, with RETRY_MIDDLEWARE on both entry points). */
export function mainConfig(i: MainConfigInput): Record<string, unknown> {
  const retry = [`${RETRY_MIDDLEWARE}@file`];
  return {
    global: { sendAnonymousUsage: false },
    providers: { swarm: { exposedByDefault: false, watch: true }, docker: { exposedByDefault: false, watch: true, network: i.network }, file: { directory: i.dynamicDir, watch: true } },
    entryPoints: {
      web: { address: ':80', http: { middlewares: retry } },
      websecure: { address: ':443', http3: { advertisedPort: 443 }, http: { tls: { certResolver: 'letsencrypt' }, middlewares: retry } },
    },
    api: { insecure: true },
    certificatesResolvers: { letsencrypt: { acme: { email: i.acmeEmail, storage: `${i.dynamicDir}/acme.json`, ...(i.acmeCa ? { caServer: i.acmeCa } : {}), httpChallenge: { entryPoint: 'web' } } } },
  };
}

/** dynamic/certificates/<path>/certificate.yml of an uploaded certificate. */
export function certificateFile(dir: string): FileConfig {
  return { tls: { certificates: [{ certFile: `${dir}/chain.crt`, keyFile: `${dir}/privkey.key` }] } };
}
