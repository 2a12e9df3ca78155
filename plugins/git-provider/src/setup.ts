// The app-setup and OAuth flows' routes, for every forge whose connection form declares one. An app
// manifest flow (its form's `appSetup`: GitHub's App): the peer's `/api/providers/<forge>/setup`,
// to which the service sends the user back with a one-time `code` (state `<prefix>_init:…`) once
// the app is created, and again with `installation_id` (state `<prefix>_setup:…`) once it is
// installed. Both states are Berth's own, sealed (AES-256-GCM under the instance's secret: its tag
// authenticates them, so no one else can make or change one) and expire in an hour: the init
// state, by `<forge>.setupState`, binds the flow to the caller's organization and the service
// address chosen there; the setup state, by `<forge>.installState`, to the caller and the
// connection (theirs, or shared with them), so that a link made by someone else installs nothing
// on a connection of theirs (CSRF). The peer's plain `gh_setup:<githubId>` is refused.
// A forge with an OAuth flow (its connection form's `oauth`: GitLab's, Gitea's): the peer's
// `/api/providers/<forge>/callback` gets the service's one-time code with a state sealed the same
// way, bound to the organization and the connection, by `<forge>.authorization` (GitLab's) or by
// the peer's `/api/providers/<forge>/authorize`, which sends the user to the service with it (Gitea's).
import { BerthError, GitProviderError, badRequest, isStorable, type BerthHost, type EntityManager, type GitProvider, type Principal, type SecretBox } from '@berth/core';
import { forgeIdField, webUrlOf } from './records.ts';
import type { GitProviderService } from './service.ts';

/** The peer's return route of a forge's app manifest flow (GitHub's `/api/providers/github/setup`). */
export const appSetupPath = (type: string) => `/api/providers/${type}/setup`;
/** The peer's OAuth callback of a forge: the service sends the user back to it with `code` and `state` (and, GitLab's, the connection's id in the redirect URI). */
export const callbackPath = (type: string) => `/api/providers/${type}/callback`;
/** The peer's route that sends the user to a forge's authorization page (Gitea's). */
export const authorizePath = (type: string) => `/api/providers/${type}/authorize`;
const STATE_LIFETIME_MS = 3600_000;
/** Where the peer's route sends the browser afterwards (its settings page). */
const AFTER = '/dashboard/settings/git-providers';

/** A flow's signed state: the organization and user it was issued to, what it is for (a URL or a record), its expiry. */
interface FlowState {
  o: string;
  u: string;
  exp: number;
}
interface InitState extends FlowState {
  url: string;
  /** The forge whose flow it is. */
  t: string;
}
/** The installation's state: the connection (`g`) of the forge (`t`) it completes. */
interface InstallState extends FlowState {
  g: string;
  t: string;
}
/** An OAuth authorization's state: the connection (`g`) and its type (`t`), so that one type's state authorizes nothing of another's. */
interface OAuthState extends FlowState {
  g: string;
  t: string;
}

export class GitProviderSetup {
  readonly #secrets: () => SecretBox;
  readonly #service: GitProviderService;
  readonly #publicUrl: () => string | undefined;

  constructor(secrets: () => SecretBox, service: GitProviderService, publicUrl: () => string | undefined) {
    this.#secrets = secrets;
    this.#service = service;
    this.#publicUrl = publicUrl;
  }

  /** An app flow's init state for the caller's organization and the chosen service (web) URL. */
  issue(principal: Principal, type: string, serviceUrl: string): { state: string; setupUrl: string } {
    const setup = this.#appSetup(type);
    const base = webUrlOf(serviceUrl, setup.url.setting);
    return { state: `${setup.statePrefix}_init:${this.#seal<InitState>(principal, { url: base, t: type })}`, setupUrl: `${this.#berthUrl()}${appSetupPath(type)}` };
  }

  /** An app flow's setup state for a connection the caller may use, and the app's installation page with it. */
  async installation(principal: Principal, type: string, connectionId: string, em: EntityManager): Promise<{ state: string; installUrl: string }> {
    const setup = this.#appSetup(type);
    const { record } = await this.#service.forge(type, connectionId, principal.organizationId, em, { userId: principal.userId, role: principal.role });
    const state = `${setup.statePrefix}_setup:${this.#seal<InstallState>(principal, { g: connectionId, t: type })}`;
    return { state, installUrl: `${setup.installPage(this.#service.forgeAccount(record))}?${new URLSearchParams({ state })}` };
  }

  #appSetup(type: string) {
    const provider = this.#service.provider(type);
    if (!provider.connection?.appSetup) throw badRequest(`The ${provider.label} provider has no app setup flow`);
    return provider.connection.appSetup;
  }

  /** A forge's authorization page for a connection of the caller's organization, with a state bound to both. */
  async authorization(principal: Principal, type: string, connectionId: string, em: EntityManager): Promise<{ state: string; authorizeUrl: string }> {
    const provider = this.#service.provider(type);
    const oauth = provider.connection?.oauth;
    if (!oauth) throw badRequest(`The ${provider.label} provider has no OAuth authorization`);
    const { record } = await this.#service.forge(type, connectionId, principal.organizationId, em);
    const account = this.#service.forgeAccount(record);
    const clientId = account.settings[oauth.clientId];
    if (typeof clientId !== 'string' || !clientId) throw badRequest(`${oauth.clientId}: the connection has no OAuth application id (${type}.update)`);
    const state = this.#seal<OAuthState>(principal, { g: connectionId, t: type });
    const query = new URLSearchParams({ client_id: clientId, redirect_uri: this.#redirect(provider, connectionId, account.settings), response_type: 'code', scope: oauth.scope, state });
    return { state, authorizeUrl: `${oauth.authorizePage(account)}?${query}` };
  }

  /**
   * The redirect URI the service is asked to send the user back to: the connection's own, else
   * Berth's callback; naming the connection in its query where the forge's flow does (GitLab's, as
   * the peer: elsewhere the connection travels in the sealed state only).
   */
  #redirect(provider: GitProvider, connectionId: string, settings: Record<string, unknown>): string {
    const oauth = provider.connection!.oauth!;
    const own = settings[oauth.redirectUri];
    const base = typeof own === 'string' && own ? own : `${this.#berthUrl()}${callbackPath(provider.id)}`;
    return oauth.redirectNamesConnection ? `${base}?${forgeIdField(provider)}=${connectionId}` : base;
  }

  #berthUrl(): string {
    return (this.#publicUrl() ?? '').replace(/\/+$/, '');
  }

  #seal<S extends FlowState>(principal: Principal, what: Omit<S, keyof FlowState>): string {
    const payload = { ...what, o: principal.organizationId, u: principal.userId, exp: Date.now() + STATE_LIFETIME_MS };
    return Buffer.from(this.#secrets().encrypt(JSON.stringify(payload))).toString('base64url');
  }

  /** The state's payload when it is Berth's, unexpired and issued to this organization; null otherwise. */
  #open<S extends FlowState>(sealed: string, organizationId: string): S | null {
    try {
      const payload = JSON.parse(this.#secrets().decrypt(Buffer.from(sealed, 'base64url').toString('utf8'))) as S;
      return payload.exp > Date.now() && payload.o === organizationId ? payload : null;
    } catch {
      return null;
    }
  }

  routes(host: BerthHost): Parameters<BerthHost['http']>[0] {
    return async app => {
      for (const provider of host.container.cradle.providers.all('git')) {
        const setup = provider.connection?.appSetup;
        if (!setup) continue;
        const type = provider.id;
        app.get(appSetupPath(type), { schema: { hide: true } }, async (req, reply) => {
          const q = req.query as Record<string, string | undefined>;
          const fail = (status: number, error: string) => reply.code(status).send({ error });
          const principal = await host.authenticate(req).catch(() => null);
          if (!principal) return fail(401, 'Unauthorized');
          const state = typeof q.state === 'string' ? q.state : '';
          const [action, rest = ''] = [state.slice(0, state.indexOf(':')), state.slice(state.indexOf(':') + 1)];
          const em = host.container.cradle.orm.em.fork();
          try {
            if (action === `${setup.statePrefix}_init`) {
              if (typeof q.code !== 'string' || !q.code || q.code.length > 255) return fail(400, 'Missing code parameter');
              const init = this.#open<InitState>(rest, principal.organizationId);
              // Another organization's (or forge's, or a forged or expired) state names no flow of this caller's.
              if (!init?.url || init.t !== type) return fail(400, 'The state is not valid for this organization (start the setup again)');
              const made = await setup.convert(init.url, q.code);
              const installation = validInstallation(q.installation_id);
              const installed = installation && provider.connection?.app ? { [provider.connection.app.installation]: installation } : {};
              const connection = await this.#service.createConnection(type, { name: made.name, ...made.settings, ...installed, ...made.secrets }, principal.organizationId, principal.userId, em);
              return reply.redirect(`${AFTER}?${new URLSearchParams({ [forgeIdField(provider)]: String(connection.connectionId) })}`, 307);
            }
            if (action === `${setup.statePrefix}_setup`) {
              const installation = validInstallation(q.installation_id);
              if (!installation) return fail(400, 'Missing installation_id parameter');
              const opened = this.#open<InstallState>(rest, principal.organizationId);
              // Another caller's (or organization's), a forged, an expired or the peer's plain <prefix>_setup:<id> state installs nothing.
              if (!opened?.g || opened.t !== type || opened.u !== principal.userId)
                return fail(400, `The state is not valid for this caller (ask ${type}.installState for the installation page again)`);
              await this.#service.setInstallation(type, opened.g, installation, principal.organizationId, em, { userId: principal.userId, role: principal.role });
              return reply.redirect(AFTER, 307);
            }
            return fail(400, 'Unknown state');
          } catch (e) {
            return failed(e, `${provider.label} provider not found`, fail);
          }
        });
      }
      // Each forge with an OAuth flow: where the user starts (the peer's authorize route, where the
      // forge has one) and where the service sends them back once they approve Berth: the code
      // becomes the connection's tokens. A redirect URI that names the connection (GitLab's) must
      // name the state's.
      for (const provider of host.container.cradle.providers.all('git')) {
        const oauth = provider.connection?.oauth;
        if (!oauth) continue;
        const type = provider.id;
        const idField = forgeIdField(provider);
        const missing = `${provider.label} provider not found`;
        if (oauth.start === 'route')
          app.get(authorizePath(type), { schema: { hide: true } }, async (req, reply) => {
            const q = req.query as Record<string, string | undefined>;
            const fail = (status: number, error: string) => reply.code(status).send({ error });
            const principal = await host.authenticate(req).catch(() => null);
            if (!principal) return fail(401, 'Unauthorized');
            const id = q[idField];
            if (typeof id !== 'string' || !id || id.length > 255 || !isStorable(id)) return fail(400, `Invalid ${provider.label} provider ID`);
            try {
              return reply.redirect((await this.authorization(principal, type, id, host.container.cradle.orm.em.fork())).authorizeUrl, 307);
            } catch (e) {
              return failed(e, missing, fail);
            }
          });
        app.get(callbackPath(type), { schema: { hide: true } }, async (req, reply) => {
          const q = req.query as Record<string, string | undefined>;
          const fail = (status: number, error: string) => reply.code(status).send({ error });
          const principal = await host.authenticate(req).catch(() => null);
          if (!principal) return fail(401, 'Unauthorized');
          if (typeof q.code !== 'string' || !q.code || q.code.length > 255) return fail(400, 'Missing or invalid code');
          const named = oauth.redirectNamesConnection ? q[idField] : undefined;
          if (oauth.redirectNamesConnection && (typeof named !== 'string' || !named || named.length > 255)) return fail(400, `Missing ${idField}`);
          const state = this.#open<OAuthState>(typeof q.state === 'string' ? q.state : '', principal.organizationId);
          // Another organization's, another type's or record's, a forged or an expired state authorizes nothing.
          if (!state || state.t !== type || (oauth.redirectNamesConnection && state.g !== named))
            return fail(400, 'The state is not valid for this organization and connection (start the authorization again)');
          try {
            const em = host.container.cradle.orm.em.fork();
            await this.#service.authorize(type, state.g, q.code, settings => this.#redirect(provider, state.g, settings), principal.organizationId, em);
            return reply.redirect(AFTER, 307);
          } catch (e) {
            return failed(e, missing, fail);
          }
        });
      }
    };
  }
}

/** A flow's failure as the routes answer it: 404 for a record not found, 403 for one the caller may not use, 400 with the reason for the rest. */
function failed<R>(e: unknown, missing: string, fail: (status: number, error: string) => R): R {
  if (e instanceof BerthError && e.code === 'NOT_FOUND') return fail(404, missing);
  if (e instanceof BerthError && e.code === 'FORBIDDEN') return fail(403, e.message);
  if (e instanceof GitProviderError || e instanceof BerthError) return fail(400, (e as Error).message);
  throw e;
}

const validInstallation = (v: unknown): string | null => (typeof v === 'string' && /^\d{1,20}$/.test(v) ? v : null);

declare module '@berth/core' {
  interface Cradle {
    /** The manifest flow's state and return route. */
    gitProviderSetup: GitProviderSetup;
  }
}
