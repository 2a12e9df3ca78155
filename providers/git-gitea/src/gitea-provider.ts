// Gitea (or Forgejo) through its REST API (/api/v1) with plain fetch and the OAuth application's
// access token (`Authorization: token …`); the token is refreshed (grant_type=refresh_token at
// /login/oauth/access_token) before it expires and the new pair answered for the record to store.
// giteaInternalUrl, when set, is where Berth reaches the server; giteaUrl stays what users see.
// Listings follow the Link header's `next`, only on the server's own origin.
import {
  GitProviderError,
  type CloneCredential,
  type GitAccount,
  type GitAccountUpdate,
  type GitBranch,
  type GitFailure,
  type GitProvider,
  type GitPullRequest,
  type GitRepository,
  type GitRepositoryRef,
  type GitWebhook,
  type GitSourceFields,
  type GitDeliveryReader,
  type GitConnectionForm,
} from '@berth/core';
import { giteaConnection, giteaSave } from './connection.ts';
import { giteaDeliveries } from './deliveries.ts';
import { allPages, oauthToken, restCall, text, type RestApi } from '@berth/provider-git-kit';

export const GITEA_COM = 'https://gitea.com';

type Json = any;
const seg = (s: string) => encodeURIComponent(s);
const repoPath = (r: GitRepositoryRef) => `/repos/${seg(r.owner)}/${seg(r.name)}`;

/** Where Berth reaches Gitea: giteaInternalUrl when set, else giteaUrl (an http(s) URL, no trailing slash). */
function baseOf(account: GitAccount): string {
  const base = (text(account.settings.giteaInternalUrl) || text(account.settings.giteaUrl) || GITEA_COM).replace(/\/+$/, '');
  try {
    if (!/^https?:$/.test(new URL(base).protocol)) throw new Error('not http(s)');
  } catch {
    throw new GitProviderError('connect', `Gitea: "${base}" is not a URL (giteaUrl)`);
  }
  return base;
}

function tokenOf(account: GitAccount): string {
  const token = text(account.secrets.accessToken);
  if (!token) throw new GitProviderError('credentials', 'Gitea: the account is not authorized yet (no access token): finish the OAuth flow');
  return token;
}

export class GiteaProvider implements GitProvider {
  readonly id = 'gitea';
  readonly label = 'Gitea';
  /** The peer's columns of a workload deploying from it. */
  readonly sourceFields: GitSourceFields = { id: 'giteaId', owner: 'giteaOwner', repository: 'giteaRepository', branch: 'giteaBranch', buildPath: 'giteaBuildPath', save: giteaSave };
  /** Its webhook deliveries (./deliveries.ts). */
  readonly deliveries: GitDeliveryReader = giteaDeliveries;
  /** What a connection keeps, its OAuth flow and the peer's gitea.* wire (./connection.ts). */
  readonly connection: GitConnectionForm = giteaConnection;

  /** One API call, and the next page its Link header names. */
  async #call(account: GitAccount, step: GitFailure, pathOrUrl: string, init?: { method?: string; body?: Json }): Promise<{ body: Json; next: string | null }> {
    const api: RestApi = {
      label: 'Gitea',
      root: `${baseOf(account)}/api/v1`,
      authorization: () => `token ${tokenOf(account)}`,
      said: body => body?.message,
      refused: (_status, said) => new GitProviderError('credentials', `Gitea refused the token: ${said}`),
    };
    const { body, headers } = await restCall(api, step, pathOrUrl, init);
    return { body, next: /<([^>]+)>;\s*rel="next"/.exec(headers.get('link') ?? '')?.[1] ?? null };
  }

  /** Every page of a listing, following the Link header. */
  #all(account: GitAccount, step: GitFailure, path: string): Promise<Json[]> {
    return allPages('Gitea', step, `${path}?limit=50`, async url => {
      const page = await this.#call(account, step, url);
      return { items: Array.isArray(page.body) ? page.body : [], next: page.next };
    });
  }

  async connect(account: GitAccount): Promise<GitAccountUpdate> {
    const { body } = await this.#call(account, 'connect', '/user');
    return { settings: { giteaUsername: body?.login ?? null, lastAuthenticatedAt: Math.floor(Date.now() / 1000) }, secrets: {} };
  }

  /** Exchanges the refresh token for a new pair when the access token expires within marginMs. */
  async refresh(account: GitAccount, marginMs: number): Promise<GitAccountUpdate | null> {
    const expires = Number(account.settings.expiresAt);
    if (!Number.isFinite(expires) || expires <= 0 || expires * 1000 - Date.now() > marginMs) return null;
    const [refreshToken, clientId, clientSecret] = [text(account.secrets.refreshToken), text(account.settings.clientId), text(account.secrets.clientSecret)];
    if (!refreshToken || !clientId || !clientSecret) throw new GitProviderError('credentials', 'Gitea: the token expires and the account has no refresh token, client id or secret to renew it');
    return this.#token(account, new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, client_secret: clientSecret }), 'refresh the token');
  }

  /** The OAuth flow's last step (outside the contract; the callback route calls it): Gitea's one-time code exchanged for the first pair. */
  async exchangeCode(account: GitAccount, code: string, redirectUri: string): Promise<GitAccountUpdate> {
    const [clientId, clientSecret] = [text(account.settings.clientId), text(account.secrets.clientSecret)];
    if (!clientId || !clientSecret) throw new GitProviderError('credentials', 'Gitea: the account has no OAuth client id or secret (clientId, clientSecret)');
    return this.#token(account, new URLSearchParams({ grant_type: 'authorization_code', code, client_id: clientId, client_secret: clientSecret, redirect_uri: redirectUri }), 'authorize Berth');
  }

  /** POST /login/oauth/access_token: the new pair, its expiry in seconds since the epoch. */
  #token(account: GitAccount, form: URLSearchParams, what: string): Promise<GitAccountUpdate> {
    return oauthToken('Gitea', `${baseOf(account)}/login/oauth/access_token`, form, what, text(account.secrets.refreshToken) || null);
  }

  async listRepositories(account: GitAccount): Promise<GitRepository[]> {
    const repos = await this.#all(account, 'repositories', '/user/repos');
    const org = text(account.settings.organizationName).toLowerCase();
    return repos
      .filter(r => !org || String(r.owner?.login).toLowerCase() === org)
      .map(r => ({
        id: String(r.id),
        name: String(r.name),
        owner: String(r.owner?.login),
        cloneUrl: `${baseOf(account)}/${r.owner?.login}/${r.name}.git`,
        defaultBranch: r.default_branch ?? null,
        private: r.private !== false,
      }));
  }

  async listBranches(account: GitAccount, repo: GitRepositoryRef): Promise<GitBranch[]> {
    const branches = await this.#all(account, 'branches', `${repoPath(repo)}/branches`);
    return branches.map(b => ({ name: String(b.name), commit: String(b.commit?.id) }));
  }

  async resolveCommit(account: GitAccount, repo: GitRepositoryRef, ref: string): Promise<string> {
    const { body } = await this.#call(account, 'commit', `${repoPath(repo)}/git/commits/${seg(ref)}`);
    if (!/^[0-9a-f]{40}$/.test(String(body?.sha))) throw new GitProviderError('commit', `Gitea answered no commit sha for ${ref}`);
    return body.sha;
  }

  /** The OAuth access token as basic auth for user "oauth2", for the hosts below the server's URL (or the internal one). */
  async cloneCredential(account: GitAccount): Promise<CloneCredential> {
    const expires = Number(account.settings.expiresAt);
    return { baseUrl: `${baseOf(account)}/`, username: 'oauth2', password: tokenOf(account), expiresAt: Number.isFinite(expires) && expires > 0 ? new Date(expires * 1000) : null };
  }

  async registerWebhook(account: GitAccount, repo: GitRepositoryRef, hook: { url: string; secret: string }): Promise<GitWebhook> {
    const { body } = await this.#call(account, 'webhook', `${repoPath(repo)}/hooks`, {
      method: 'POST',
      body: { type: 'gitea', config: { url: hook.url, content_type: 'json', secret: hook.secret }, events: ['push', 'pull_request'], active: true },
    });
    return { id: String(body.id) };
  }

  async removeWebhook(account: GitAccount, repo: GitRepositoryRef, hookId: string): Promise<void> {
    await this.#call(account, 'webhook', `${repoPath(repo)}/hooks/${seg(hookId)}`, { method: 'DELETE' }).catch((e: GitProviderError) => {
      if (!/not found/.test(e.message)) throw e; // already gone
    });
  }

  /** Pull requests share the issues' numbers: the comment goes to the issue comments. */
  async commentOnPullRequest(account: GitAccount, repo: GitRepositoryRef, number: number, body: string): Promise<{ id: string }> {
    const made = await this.#call(account, 'comment', `${repoPath(repo)}/issues/${number}/comments`, { method: 'POST', body: { body } });
    return { id: String(made.body.id) };
  }

  /** The user's permission on the repository (GET .../collaborators/{login}/permission): write, admin or owner is write access; an unknown user (404) has none. */
  async hasWriteAccess(account: GitAccount, repo: GitRepositoryRef, author: { id: string | null; login: string | null }): Promise<boolean> {
    if (!author.login) throw new GitProviderError('access', 'Gitea: the pull request names no author login to check');
    const found = await this.#call(account, 'access', `${repoPath(repo)}/collaborators/${seg(author.login)}/permission`).catch((e: GitProviderError) => {
      if (e.failure === 'missing') return null;
      throw e;
    });
    return ['write', 'admin', 'owner'].includes(String(found?.body?.permission));
  }

  /** GET .../pulls/{index}: its head (repository, branch, commit), base branch, state and author. */
  async pullRequest(account: GitAccount, repo: GitRepositoryRef, number: number): Promise<GitPullRequest> {
    const { body } = await this.#call(account, 'pullRequest', `${repoPath(repo)}/pulls/${number}`);
    const head = body?.head ?? {};
    // A fork deleted since leaves the head without a repository: nothing Berth could clone.
    if (!head.repo?.full_name || !head.ref || !head.sha) throw new GitProviderError('pullRequest', `Gitea: pull request #${number} names no head repository, branch and commit`);
    return {
      number: Number(body.number),
      state: body.state === 'open' ? 'open' : 'closed',
      headRepository: String(head.repo.full_name),
      headBranch: String(head.ref),
      headSha: String(head.sha),
      baseBranch: String(body.base?.ref ?? ''),
      author: { id: body.user?.id !== undefined ? String(body.user.id) : null, login: body.user?.login ?? null },
    };
  }

  /** An issue comment edited by its id (PATCH .../issues/comments/:id); the number is not part of the path. */
  async updatePullRequestComment(account: GitAccount, repo: GitRepositoryRef, _number: number, commentId: string, body: string): Promise<void> {
    await this.#call(account, 'comment', `${repoPath(repo)}/issues/comments/${seg(commentId)}`, { method: 'PATCH', body: { body } });
  }
}
