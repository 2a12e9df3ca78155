// The OAuth and manifest flows' return routes. GitHub: the App manifest flow's return route, the peer's `/api/providers/github/setup`: GitHub
// sends the user back with a one-time `code` (state `gh_init:…`) once the App is created, and
// again with `installation_id` (state `gh_setup:…`) once it is installed. Both states are Berth's
// own, sealed (AES-256-GCM under the instance's secret: its tag authenticates them, so no one
// else can make or change one) and expire in an hour: gh_init, by github.setupState, binds the
// flow to the caller's organization and the GitHub URL chosen there; gh_setup, by
// github.installState, to the caller and the connection (theirs, or shared with them), so that a
// link made by someone else installs nothing on a connection of theirs (CSRF). The peer's plain
// `gh_setup:<githubId>` is refused.
// GitLab: the peer's `/api/providers/gitlab/callback` gets GitLab's one-time code with a state that
// gitlab.authorization sealed the same way, bound to the organization and the connection. Gitea:
// the peer's `/api/providers/gitea/authorize` sends the user to Gitea with such a state, and
// `/api/providers/gitea/callback` (the same handler as GitLab's) takes the code back.
import { BerthError, GitProviderError, badRequest, isStorable, type BerthHost, type EntityManager, type Principal, type SecretBox } from '@berth/core';
import { webUrlOf } from './records.ts';
import type { GitProviderService } from './service.ts';

export const SETUP_PATH = '/api/providers/github/setup';
/** The peer's GitLab OAuth callback; GitLab sends the user back to it with `code`, `state` and (in the redirect URI) `gitlabId`. */
export const GITLAB_CALLBACK_PATH = '/api/providers/gitlab/callback';
/** The peer's Gitea OAuth routes: the first sends the user to Gitea's authorization page, Gitea sends them back to the second. */
export const GITEA_AUTHORIZE_PATH = '/api/providers/gitea/authorize';
export const GITEA_CALLBACK_PATH = '/api/providers/gitea/callback';
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
}
/** The installation's state: the github connection (`g`) it completes. */
interface InstallState extends FlowState {
  g: string;
}
/** An OAuth authorization's state: the connection (`g`) and its type (`t`), so that one type's state authorizes nothing of another's. */
interface OAuthState extends FlowState {
  g: string;
  t: 'gitlab' | 'gitea';
}

/** What a manifest conversion answers (GithubProvider.convertManifest); not part of the git provider contract. */
interface ManifestConverter {
  convertManifest(
    githubUrl: string,
    code: string,
  ): Promise<{
    name: string;
    githubAppName: string;
    githubAppId: number;
    githubClientId: string;
    githubClientSecret: string;
    githubWebhookSecret: string | null;
    githubPrivateKey: string;
    githubUrl: string;
  }>;
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

  /** A gh_init state for the caller's organization and the chosen GitHub (web) URL. */
  issue(principal: Principal, githubUrl: string): { state: string; setupUrl: string } {
    const base = webUrlOf(githubUrl, 'githubUrl');
    return { state: `gh_init:${this.#seal<InitState>(principal, { url: base })}`, setupUrl: `${this.#berthUrl()}${SETUP_PATH}` };
  }

  /** A gh_setup state for a GitHub connection the caller may use, and the App's installation page with it. */
  async installation(principal: Principal, githubId: string, em: EntityManager): Promise<{ state: string; installUrl: string }> {
    const { github } = await this.#service.github(githubId, principal.organizationId, em, { userId: principal.userId, role: principal.role });
    const state = `gh_setup:${this.#seal<InstallState>(principal, { g: github.githubId })}`;
    // The record keeps the App's page (the manifest's html_url), or its slug.
    const app = github.githubAppName ?? '';
    const page = /^https?:\/\//.test(app) ? app.replace(/\/+$/, '') : `${github.githubUrl.replace(/\/+$/, '')}/apps/${encodeURIComponent(app)}`;
    return { state, installUrl: `${page}/installations/new?${new URLSearchParams({ state })}` };
  }

  /** GitLab's authorization page for a connection of the caller's organization, with a state bound to both. */
  async gitlabAuthorization(principal: Principal, gitlabId: string, em: EntityManager): Promise<{ state: string; authorizeUrl: string }> {
    const { gitlab } = await this.#service.gitlab(gitlabId, principal.organizationId, em);
    if (!gitlab.applicationId) throw badRequest('applicationId: the connection has no OAuth application id (gitlab.update)');
    const state = this.#seal<OAuthState>(principal, { g: gitlab.gitlabId, t: 'gitlab' });
    const query = new URLSearchParams({ client_id: gitlab.applicationId, redirect_uri: this.#gitlabRedirect(gitlab), response_type: 'code', scope: 'api read_user read_repository', state });
    return { state, authorizeUrl: `${gitlab.gitlabUrl}/oauth/authorize?${query}` };
  }

  /** The redirect URI GitLab is asked to send the user back to: the record's (or Berth's callback) naming the record, as the peer. */
  #gitlabRedirect(gitlab: { gitlabId: string; redirectUri?: string | null }): string {
    return `${gitlab.redirectUri || `${this.#berthUrl()}${GITLAB_CALLBACK_PATH}`}?gitlabId=${gitlab.gitlabId}`;
  }

  /** Gitea's authorization page for a connection of the caller's organization, with a state bound to both (the peer's route answers a redirect to it). */
  async giteaAuthorization(principal: Principal, giteaId: string, em: EntityManager): Promise<string> {
    const { gitea } = await this.#service.gitea(giteaId, principal.organizationId, em);
    if (!gitea.clientId) throw badRequest('clientId: the connection has no OAuth client id (gitea.update)');
    const state = this.#seal<OAuthState>(principal, { g: gitea.giteaId, t: 'gitea' });
    const query = new URLSearchParams({ client_id: gitea.clientId, response_type: 'code', redirect_uri: this.#giteaRedirect(gitea), scope: 'read:user repo', state });
    return `${gitea.giteaUrl}/login/oauth/authorize?${query}`;
  }

  /** Gitea's redirect URI: the record's, else Berth's callback; the connection travels in the sealed state. */
  #giteaRedirect(gitea: { redirectUri?: string | null }): string {
    return gitea.redirectUri || `${this.#berthUrl()}${GITEA_CALLBACK_PATH}`;
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
      app.get(SETUP_PATH, { schema: { hide: true } }, async (req, reply) => {
        const q = req.query as Record<string, string | undefined>;
        const fail = (status: number, error: string) => reply.code(status).send({ error });
        const principal = await host.authenticate(req).catch(() => null);
        if (!principal) return fail(401, 'Unauthorized');
        const state = typeof q.state === 'string' ? q.state : '';
        const [action, rest = ''] = [state.slice(0, state.indexOf(':')), state.slice(state.indexOf(':') + 1)];
        const orm = host.container.cradle.orm;
        const em = orm.em.fork();
        try {
          if (action === 'gh_init') {
            if (typeof q.code !== 'string' || !q.code || q.code.length > 255) return fail(400, 'Missing code parameter');
            const init = this.#open<InitState>(rest, principal.organizationId);
            // Another organization's (or a forged or expired) state names no flow of this caller's.
            if (!init?.url) return fail(400, 'The state is not valid for this organization (start the setup again)');
            const converter = this.#service.provider('github') as Partial<ManifestConverter>;
            if (!converter.convertManifest) return fail(400, 'The enabled GitHub provider cannot convert an App manifest');
            const app = await converter.convertManifest(init.url, q.code);
            const made = await this.#service.createGithub({ ...app, githubInstallationId: validInstallation(q.installation_id) }, principal.organizationId, principal.userId, em);
            return reply.redirect(`${AFTER}?githubId=${made.githubId}`, 307);
          }
          if (action === 'gh_setup') {
            const installation = validInstallation(q.installation_id);
            if (!installation) return fail(400, 'Missing installation_id parameter');
            const setup = this.#open<InstallState>(rest, principal.organizationId);
            // Another caller's (or organization's), a forged, an expired or the peer's plain gh_setup:<githubId> state installs nothing.
            if (!setup?.g || setup.u !== principal.userId) return fail(400, 'The state is not valid for this caller (ask github.installState for the installation page again)');
            await this.#service.setGithubInstallation(setup.g, installation, principal.organizationId, em, { userId: principal.userId, role: principal.role });
            return reply.redirect(AFTER, 307);
          }
          return fail(400, 'Unknown state');
        } catch (e) {
          return failed(e, 'Github provider not found', fail);
        }
      });
      // Gitea's authorization page, with a state bound to the caller's organization and the connection.
      app.get(GITEA_AUTHORIZE_PATH, { schema: { hide: true } }, async (req, reply) => {
        const q = req.query as Record<string, string | undefined>;
        const fail = (status: number, error: string) => reply.code(status).send({ error });
        const principal = await host.authenticate(req).catch(() => null);
        if (!principal) return fail(401, 'Unauthorized');
        if (typeof q.giteaId !== 'string' || !q.giteaId || q.giteaId.length > 255 || !isStorable(q.giteaId)) return fail(400, 'Invalid Gitea provider ID');
        try {
          return reply.redirect(await this.giteaAuthorization(principal, q.giteaId, host.container.cradle.orm.em.fork()), 307);
        } catch (e) {
          return failed(e, 'Gitea provider not found', fail);
        }
      });
      // GitLab and Gitea send the user back here once they approve Berth: the code becomes the connection's tokens.
      // GitLab's names the connection in the query too (its redirect URI carries gitlabId): it must be the state's.
      const callbacks = [
        {
          path: GITLAB_CALLBACK_PATH,
          type: 'gitlab',
          idParam: 'gitlabId',
          redirect: (g: { redirectUri?: string | null }) => this.#gitlabRedirect(g as { gitlabId: string; redirectUri?: string | null }),
        },
        { path: GITEA_CALLBACK_PATH, type: 'gitea', idParam: null, redirect: (g: { redirectUri?: string | null }) => this.#giteaRedirect(g) },
      ] as const;
      for (const { path, type, idParam, redirect } of callbacks) {
        app.get(path, { schema: { hide: true } }, async (req, reply) => {
          const q = req.query as Record<string, string | undefined>;
          const fail = (status: number, error: string) => reply.code(status).send({ error });
          const principal = await host.authenticate(req).catch(() => null);
          if (!principal) return fail(401, 'Unauthorized');
          if (typeof q.code !== 'string' || !q.code || q.code.length > 255) return fail(400, 'Missing or invalid code');
          const named = idParam ? q[idParam] : undefined;
          if (idParam && (typeof named !== 'string' || !named || named.length > 255)) return fail(400, `Missing ${idParam}`);
          const state = this.#open<OAuthState>(typeof q.state === 'string' ? q.state : '', principal.organizationId);
          // Another organization's, another type's or record's, a forged or an expired state authorizes nothing.
          if (!state || state.t !== type || (idParam && state.g !== named)) return fail(400, 'The state is not valid for this organization and connection (start the authorization again)');
          try {
            await this.#service.authorize(type, state.g, q.code, redirect, principal.organizationId, host.container.cradle.orm.em.fork());
            return reply.redirect(AFTER, 307);
          } catch (e) {
            return failed(e, `${type === 'gitlab' ? 'Gitlab' : 'Gitea'} provider not found`, fail);
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
