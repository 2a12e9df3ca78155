// Forward auth as Berth answers it: the auth domain of each proxy, the check the proxy asks before
// each request to a guarded domain, and the sign-in that sets the session cookie. The proxy reaches
// Berth on this host through the engine's docker_gwbridge gateway (as Berth's own domain does); a
// server's proxy through serverIp. The cookie holds the session's token sealed with the instance's
// key: a normal, revocable Berth session, but a value the API does not take, should a workload below
// the cookie's domain read it; the proxy also takes it out of the requests workloads get.
import { BerthError, Member, optionalService, User, type Cradle, type EntityManager, type ProxyForwardAuth, type ProxyRoute, type ProxyWorkloadConfig } from '@berth/core';
import { domainToASCII } from 'node:url';
import type {} from '@berth/plugin-domain'; // the `domainService` and `proxyRouting` of the container
import type { WorkloadRef } from '@berth/plugin-workloads';
import { ForwardAuthRole, ForwardAuthSettings, type ForwardAuthSettingsRow } from './entities.ts';
import { ROLES } from './schemas.ts';

/** The cookie that carries a signed-in session to the guarded domains. */
export const COOKIE = 'berth_forward_auth';
/** Where Berth answers on an auth domain (the proxy routes this prefix of it to Berth). */
export const PREFIX = '/api/forward-auth';
/** The headers of an allowed request the workload gets. */
export const COPY_HEADERS = ['Remote-User', 'Remote-Email', 'Remote-Role'];
/** Berth's own provider: it answers the checks itself (no SSO provider or extra service needed). */
export const BERTH_PROVIDER = 'berth';
/** The engine object name of an auth domain's route on its proxy. */
export const AUTH_ROUTE = 'berth-forward-auth';
const SESSION_SECONDS = 30 * 24 * 3600;

/** A host as the proxy matches it: lower-case ASCII (punycode for an internationalised name). */
export const asciiHost = (host: string) => domainToASCII(host.trim().toLowerCase());

/** The parent an auth domain's cookie is scoped to (the peer's baseDomain): auth.example.com → .example.com. */
export function baseDomainOf(authDomain: string): string {
  const labels = authDomain.split('.').filter(Boolean);
  return `.${(labels.length > 2 ? labels.slice(1) : labels).join('.')}`;
}

export const signInUrl = (s: { authDomain: string; https: boolean }) => `${s.https ? 'https' : 'http'}://${s.authDomain}${PREFIX}/sign-in`;

const rank = (role: string) => Math.max(0, ROLES.indexOf(role as (typeof ROLES)[number]));

/** What a check answers: allowed (with the headers for the workload), or why not. */
export type Verdict =
  { allowed: true; headers: Record<string, string> } | { allowed: false; why: 'unknown-domain' | 'not-signed-in' | 'not-a-member' | 'role'; signIn: string | null; originalUrl: string };

export class ForwardAuth {
  readonly #cradle: () => Cradle;
  readonly #port: () => number;

  constructor(cradle: () => Cradle, port: () => number) {
    this.#cradle = cradle;
    this.#port = port;
  }

  settings(serverId: string | null, em: EntityManager): Promise<ForwardAuthSettingsRow | null> {
    return em.findOne(ForwardAuthSettings, { serverId });
  }

  byAuthDomain(host: string, em: EntityManager): Promise<ForwardAuthSettingsRow | null> {
    const ascii = asciiHost(host.replace(/:\d+$/, ''));
    return ascii ? em.findOne(ForwardAuthSettings, { authDomain: ascii }) : Promise.resolve(null);
  }

  /** Berth's address as the proxy of this machine (the engine's gateway) or of a server (serverIp) reaches it; null when it cannot. */
  async address(serverId: string | null): Promise<string | null> {
    const { config, hosts } = this.#cradle();
    if (serverId) return config.serverIp ? `${config.serverIp.includes(':') ? `[${config.serverIp}]` : config.serverIp}:${this.#port()}` : null;
    const bridge = (await (
      await hosts.local()
    )
      .getNetwork('docker_gwbridge')
      .inspect()
      .catch(() => null)) as { IPAM?: { Config?: { Gateway?: string }[] } } | null;
    const gateway = bridge?.IPAM?.Config?.find(c => c.Gateway)?.Gateway;
    return gateway ? `${gateway}:${this.#port()}` : null;
  }

  /** The check of a guarded route (the domain plugin's gate): none while its proxy has no auth domain served by Berth. */
  gate = async (workload: WorkloadRef, route: ProxyRoute, em: EntityManager): Promise<ProxyForwardAuth | null> => {
    const settings = await this.settings(workload.serverId, em);
    if (!settings?.providerId) return null;
    const upstream = await this.address(workload.serverId);
    return upstream ? { upstream, uri: `${PREFIX}/verify?domainId=${encodeURIComponent(route.domainId)}`, copyHeaders: COPY_HEADERS, cookie: COOKIE } : null;
  };

  /** Routes the auth domain's sign-in prefix to Berth on its proxy (or takes the route away). */
  async applyAuthRoute(serverId: string | null, settings: ForwardAuthSettingsRow | null): Promise<void> {
    const routing = optionalService(this.#cradle(), 'proxyRouting');
    const provider = routing?.provider(serverId);
    if (!routing || !provider) return;
    await routing.ensure(serverId);
    const upstream = settings ? await this.address(serverId) : null;
    if (settings && !upstream)
      throw new BerthError('BAD_REQUEST', `serverId: the proxy of server ${serverId} cannot reach Berth: set serverIp (BERTH_SERVER_IP), the address servers reach Berth at`, [
        { path: ['serverId'], message: 'serverId: Berth has no address its servers reach (config serverIp)' },
      ]);
    const config: ProxyWorkloadConfig = {
      appName: AUTH_ROUTE,
      routes:
        settings && upstream
          ? [
              {
                domainId: settings.forwardAuthSettingsId,
                uniqueConfigKey: 0,
                host: settings.authDomain,
                path: PREFIX,
                internalPath: '/',
                stripPath: false,
                https: settings.https,
                certificateType: settings.certificateType as 'none',
                customCertResolver: settings.customCertResolver ?? null,
                port: this.#port(),
                serviceName: null,
                customEntrypoint: null,
                middlewares: [],
                upstream,
              },
            ]
          : [],
      redirects: [],
      basicAuth: [],
    };
    await routing.apply('route the auth domain', () => (config.routes.length ? provider.applyWorkload(config) : provider.removeWorkload(AUTH_ROUTE)));
  }

  /** Applies again the routes of every workload with a guarded domain (an auth domain came, changed or went). */
  async resync(em: EntityManager): Promise<void> {
    const cradle = this.#cradle();
    const seen = new Set<string>();
    for (const d of await cradle.domainService.withForwardAuth(em)) {
      const key = `${d.serviceType}:${d.serviceId}`;
      if (seen.has(key)) continue;
      seen.add(key);
      await cradle.proxyRouting.syncOwnerOf(d, em);
    }
  }

  /**
   * The proxy's question for a request to a guarded domain: its headers (the session cookie; the
   * original scheme and URI) answered allowed with who signed in, or refused with where to sign in.
   */
  async verify(domainId: string, headers: { cookie?: string; proto?: string; uri?: string }, em: EntityManager): Promise<Verdict> {
    const cradle = this.#cradle();
    const domain = await cradle.domainService.find(domainId, em);
    const workload = domain?.forwardAuthEnabled && domain.enabled ? await cradle.workloads.kind(domain.serviceType)?.find(domain.serviceId, em) : null;
    const host = domain ? asciiHost(domain.host) || domain.host : '';
    const uri = headers.uri && headers.uri.startsWith('/') && headers.uri.length <= 4096 ? headers.uri : '/';
    const scheme = headers.proto === 'http' || headers.proto === 'https' ? headers.proto : domain?.https ? 'https' : 'http';
    const originalUrl = `${scheme}://${host}${uri}`;
    if (!domain || !workload) return { allowed: false, why: 'unknown-domain', signIn: null, originalUrl };
    const settings = await this.settings(workload.serverId, em);
    const signIn = settings ? `${signInUrl(settings)}?${new URLSearchParams({ rd: originalUrl })}` : null;
    const userId = await this.#sessionUser(headers.cookie);
    if (!userId) return { allowed: false, why: 'not-signed-in', signIn, originalUrl };
    const member = await em.findOne(Member, { userId, organizationId: domain.organizationId });
    if (!member) return { allowed: false, why: 'not-a-member', signIn, originalUrl };
    const needed = (await em.findOne(ForwardAuthRole, { domainId }))?.role ?? 'member';
    if (rank(member.role) < rank(needed)) return { allowed: false, why: 'role', signIn, originalUrl };
    const user = await em.findOneOrFail(User, { id: userId });
    return { allowed: true, headers: { 'Remote-User': userId, 'Remote-Email': user.email, 'Remote-Role': member.role } };
  }

  /** The user of the session the cookie carries (sealed), null when none or not valid. */
  async #sessionUser(cookieHeader: string | undefined): Promise<string | null> {
    const sealed = cookieValue(cookieHeader, COOKIE);
    if (!sealed || sealed.length > 1024) return null;
    const cradle = this.#cradle();
    try {
      const token = cradle.secrets.decrypt(sealed);
      return (await cradle.sessions.authenticate(undefined, token))?.userId ?? null;
    } catch {
      return null;
    }
  }

  /** The cookie that carries a new session of the user to the auth domain's parent. */
  sessionCookie(token: string, settings: ForwardAuthSettingsRow): string {
    const sealed = this.#cradle().secrets.encrypt(token);
    return [`${COOKIE}=${sealed}`, `Domain=${settings.baseDomain.replace(/^\./, '')}`, 'Path=/', `Max-Age=${SESSION_SECONDS}`, 'HttpOnly', 'SameSite=Lax', ...(settings.https ? ['Secure'] : [])].join(
      '; ',
    );
  }

  /**
   * Where the sign-in returns: only an http(s) URL on a guarded domain of an organization the user is
   * a member of (no open redirect); null otherwise.
   */
  async returnTo(rd: string | undefined, userId: string, em: EntityManager): Promise<string | null> {
    if (!rd) return null;
    let url: URL;
    try {
      url = new URL(rd);
    } catch {
      return null;
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return null;
    const organizations = new Set((await em.find(Member, { userId })).map(m => m.organizationId));
    const guarded = await this.#cradle().domainService.withForwardAuth(em);
    const ok = guarded.some(d => d.enabled && organizations.has(d.organizationId) && (asciiHost(d.host) || d.host) === url.hostname);
    return ok ? url.toString() : null;
  }
}

/** A cookie's value from a Cookie header; undefined when absent. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

declare module '@berth/core' {
  interface Cradle {
    /** Forward auth's checks, sign-in and auth domains (forwardAuth.*); from the forward-auth plugin. */
    forwardAuth: ForwardAuth;
  }
}
