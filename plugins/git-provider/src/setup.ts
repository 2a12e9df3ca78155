// The GitHub App manifest flow's return route, the peer's `/api/providers/github/setup`: GitHub
// sends the user back with a one-time `code` (state `gh_init:…`) once the App is created, and
// again with `installation_id` (state `gh_setup:<githubId>`) once it is installed. The gh_init
// state is Berth's own, sealed (authenticated encryption) by github.setupState: it binds the
// flow to the caller's organization and to the GitHub URL chosen there, and expires in an hour.
import { BerthError, GitProviderError, badRequest, type BerthHost, type Principal, type SecretBox } from '@berth/core';
import type { GitProviderService } from './service.ts';

export const SETUP_PATH = '/api/providers/github/setup';
const STATE_LIFETIME_MS = 3600_000;
/** Where the peer's route sends the browser afterwards (its settings page). */
const AFTER = '/dashboard/settings/git-providers';

interface InitState { o: string; u: string; url: string; exp: number }

/** What a manifest conversion answers (GithubProvider.convertManifest); not part of the git provider contract. */
interface ManifestConverter {
  convertManifest(githubUrl: string, code: string): Promise<{ name: string; githubAppName: string; githubAppId: number; githubClientId: string; githubClientSecret: string; githubWebhookSecret: string | null; githubPrivateKey: string; githubUrl: string }>;
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
    let url: URL;
    try {
      url = new URL(githubUrl);
    } catch {
      throw badRequest('githubUrl: is not a URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badRequest('githubUrl: must be an http(s) URL');
    if (url.username || url.password || url.search || url.hash) throw badRequest('githubUrl: must be a plain web address (no user, query or fragment)');
    const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
    const payload: InitState = { o: principal.organizationId, u: principal.userId, url: base, exp: Date.now() + STATE_LIFETIME_MS };
    const sealed = Buffer.from(this.#secrets().encrypt(JSON.stringify(payload))).toString('base64url');
    return { state: `gh_init:${sealed}`, setupUrl: `${(this.#publicUrl() ?? '').replace(/\/+$/, '')}${SETUP_PATH}` };
  }

  #open(sealed: string): InitState | null {
    try {
      const payload = JSON.parse(this.#secrets().decrypt(Buffer.from(sealed, 'base64url').toString('utf8'))) as InitState;
      return payload.exp > Date.now() ? payload : null;
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
            const init = this.#open(rest);
            // Another organization's (or a forged or expired) state names no flow of this caller's.
            if (!init || init.o !== principal.organizationId) return fail(400, 'The state is not valid for this organization (start the setup again)');
            const converter = this.#service.provider('github') as Partial<ManifestConverter>;
            if (!converter.convertManifest) return fail(400, 'The enabled GitHub provider cannot convert an App manifest');
            const app = await converter.convertManifest(init.url, q.code);
            const made = await this.#service.createGithub({ ...app, githubInstallationId: validInstallation(q.installation_id) }, principal.organizationId, principal.userId, em);
            return reply.redirect(`${AFTER}?githubId=${made.githubId}`, 307);
          }
          if (action === 'gh_setup') {
            const installation = validInstallation(q.installation_id);
            if (!rest || rest.length > 255) return fail(400, 'Missing github provider id');
            if (!installation) return fail(400, 'Missing installation_id parameter');
            await this.#service.setGithubInstallation(rest, installation, principal.organizationId, em);
            return reply.redirect(AFTER, 307);
          }
          return fail(400, 'Unknown state');
        } catch (e) {
          if (e instanceof BerthError && e.code === 'NOT_FOUND') return fail(404, 'Github provider not found');
          if (e instanceof GitProviderError || e instanceof BerthError) return fail(400, (e as Error).message);
          throw e;
        }
      });
    };
  }
}

const validInstallation = (v: unknown): string | null => (typeof v === 'string' && /^\d{1,20}$/.test(v) ? v : null);

declare module '@berth/core' {
  interface Cradle {
    /** The manifest flow's state and return route. */
    gitProviderSetup: GitProviderSetup;
  }
}
