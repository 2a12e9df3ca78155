// Bitbucket Cloud through its REST 2.0 API with plain fetch (no SDK: the handful of calls Berth
// makes need none). An account is an API token with its Atlassian account's e-mail (basic auth
// `<email>:<token>` for the API, user `x-bitbucket-api-token-auth` for git), or, for older
// records, a user name and app password, which Atlassian is retiring: when Bitbucket refuses
// one, the error says so. Listings follow Bitbucket's `next` links, only on the API's own origin.
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
import { bitbucketConnection, bitbucketSave } from './connection.ts';
import { bitbucketDeliveries } from './deliveries.ts';
import { allPages, restCall, text, type RestApi } from '@berth/provider-git-kit';

export const BITBUCKET_API = 'https://api.bitbucket.org/2.0';
export const BITBUCKET_WEB = 'https://bitbucket.org';
/** The user name git takes with an API token (Atlassian's documentation for API tokens and git). */
export const API_TOKEN_USER = 'x-bitbucket-api-token-auth';

type Json = any;
/** What a registered webhook is called for: pushes (deploys) and pull requests (previews). */
const PUSH_AND_PULL_REQUESTS = ['repo:push', 'pullrequest:created', 'pullrequest:updated', 'pullrequest:fulfilled', 'pullrequest:rejected'];

interface BitbucketAccount {
  /** Basic credentials for the API. */
  api: { user: string; password: string };
  /** Basic credentials for git. */
  git: { user: string; password: string };
  /** Whose repositories are listed: the workspace, else the user name. */
  workspace: string | null;
  /** An app password (not an API token): named when Bitbucket refuses it. */
  appPassword: boolean;
}

function accountOf(account: GitAccount): BitbucketAccount {
  const [apiToken, appPassword] = [text(account.secrets.apiToken), text(account.secrets.appPassword)];
  const [email, username] = [text(account.settings.bitbucketEmail), text(account.settings.bitbucketUsername)];
  const workspace = text(account.settings.bitbucketWorkspaceName) || username || null;
  if (apiToken) {
    if (!email) throw new GitProviderError('credentials', "Bitbucket: an API token needs its Atlassian account's e-mail (bitbucketEmail) for the API");
    return { api: { user: email, password: apiToken }, git: { user: API_TOKEN_USER, password: apiToken }, workspace, appPassword: false };
  }
  if (appPassword && username) return { api: { user: username, password: appPassword }, git: { user: username, password: appPassword }, workspace, appPassword: true };
  throw new GitProviderError('credentials', 'Bitbucket: the account has no API token (apiToken with bitbucketEmail) nor an app password with its user name (appPassword, bitbucketUsername)');
}

const basic = (c: { user: string; password: string }) => `Basic ${Buffer.from(`${c.user}:${c.password}`).toString('base64')}`;
const seg = (s: string) => encodeURIComponent(s);
const repoPath = (r: GitRepositoryRef) => `/repositories/${seg(r.owner)}/${seg(r.name)}`;

export interface BitbucketOptions {
  /** The REST API's root (default https://api.bitbucket.org/2.0). */
  apiUrl?: string;
  /** Where repositories are cloned from (default https://bitbucket.org). */
  webUrl?: string;
}

export class BitbucketProvider implements GitProvider {
  readonly id = 'bitbucket';
  readonly label = 'Bitbucket';
  /** The peer's columns of a workload deploying from it. */
  readonly sourceFields: GitSourceFields = {
    id: 'bitbucketId',
    owner: 'bitbucketOwner',
    repository: 'bitbucketRepository',
    branch: 'bitbucketBranch',
    buildPath: 'bitbucketBuildPath',
    slug: 'bitbucketRepositorySlug',
    save: bitbucketSave,
  };
  /** Its webhook deliveries (./deliveries.ts). */
  readonly deliveries: GitDeliveryReader = bitbucketDeliveries;
  /** What a connection keeps and the peer's bitbucket.* wire (./connection.ts). */
  readonly connection: GitConnectionForm = bitbucketConnection;
  readonly #api: string;
  readonly #web: string;

  constructor(options: BitbucketOptions = {}) {
    this.#api = (options.apiUrl || BITBUCKET_API).replace(/\/+$/, '');
    this.#web = (options.webUrl || BITBUCKET_WEB).replace(/\/+$/, '');
  }

  /** One API call; an app password's refusal is said plainly (Atlassian is retiring them). */
  async #call(a: BitbucketAccount, step: GitFailure, pathOrUrl: string, init?: { method?: string; body?: Json }): Promise<Json> {
    const api: RestApi = {
      label: 'Bitbucket',
      root: this.#api,
      authorization: () => basic(a.api),
      said: body => body?.error?.message,
      refused: (status, said) =>
        a.appPassword && status === 401
          ? new GitProviderError(
              'credentials',
              `Bitbucket refused the app password of ${a.api.user} (${said}): Atlassian is retiring app passwords; create an API token and set apiToken and bitbucketEmail`,
            )
          : new GitProviderError('credentials', `Bitbucket refused the credentials of ${a.api.user}: ${said}`),
    };
    return (await restCall(api, step, pathOrUrl, init)).body;
  }

  /** Every page of a listing, following `next`. */
  #all(a: BitbucketAccount, step: GitFailure, path: string): Promise<Json[]> {
    return allPages('Bitbucket', step, `${path}${path.includes('?') ? '&' : '?'}pagelen=100`, async url => {
      const page = await this.#call(a, step, url);
      return { items: (page?.values as Json[]) ?? [], next: typeof page?.next === 'string' && page.next ? page.next : null };
    });
  }

  async connect(account: GitAccount): Promise<GitAccountUpdate> {
    await this.#call(accountOf(account), 'connect', '/user');
    return { settings: {}, secrets: {} };
  }

  /** API tokens and app passwords do not expire on a schedule: nothing to renew. */
  async refresh(account: GitAccount): Promise<GitAccountUpdate | null> {
    accountOf(account);
    return null;
  }

  async listRepositories(account: GitAccount): Promise<GitRepository[]> {
    const a = accountOf(account);
    if (!a.workspace) throw new GitProviderError('repositories', 'Bitbucket: name a workspace (bitbucketWorkspaceName) or a user name (bitbucketUsername) to list');
    const repos = await this.#all(a, 'repositories', `/repositories/${seg(a.workspace)}`);
    return repos.map(r => {
      const owner = String(r.workspace?.slug ?? r.full_name?.split('/')[0] ?? a.workspace);
      return {
        id: String(r.uuid ?? r.full_name),
        name: String(r.slug),
        owner,
        cloneUrl: this.#cloneUrl(owner, String(r.slug)),
        defaultBranch: r.mainbranch?.name ?? null,
        private: r.is_private !== false,
      };
    });
  }

  #cloneUrl(owner: string, slug: string): string {
    return `${this.#web}/${owner}/${slug}.git`;
  }

  async listBranches(account: GitAccount, repo: GitRepositoryRef): Promise<GitBranch[]> {
    const branches = await this.#all(accountOf(account), 'branches', `${repoPath(repo)}/refs/branches`);
    return branches.map(b => ({ name: String(b.name), commit: String(b.target?.hash) }));
  }

  async resolveCommit(account: GitAccount, repo: GitRepositoryRef, ref: string): Promise<string> {
    const commit = await this.#call(accountOf(account), 'commit', `${repoPath(repo)}/commit/${seg(ref)}`);
    if (!/^[0-9a-f]{40}$/.test(String(commit?.hash))) throw new GitProviderError('commit', `Bitbucket answered no commit hash for ${ref}`);
    return commit.hash;
  }

  /** The API token as user x-bitbucket-api-token-auth (or the app password as its user), for the hosts below the web URL only. */
  async cloneCredential(account: GitAccount): Promise<CloneCredential> {
    const a = accountOf(account);
    return { baseUrl: `${this.#web}/`, username: a.git.user, password: a.git.password, expiresAt: null };
  }

  async registerWebhook(account: GitAccount, repo: GitRepositoryRef, hook: { url: string; secret: string }): Promise<GitWebhook> {
    const made = await this.#call(accountOf(account), 'webhook', `${repoPath(repo)}/hooks`, {
      method: 'POST',
      body: { description: 'Berth', url: hook.url, active: true, secret: hook.secret, events: PUSH_AND_PULL_REQUESTS },
    });
    return { id: String(made.uuid) };
  }

  async removeWebhook(account: GitAccount, repo: GitRepositoryRef, hookId: string): Promise<void> {
    await this.#call(accountOf(account), 'webhook', `${repoPath(repo)}/hooks/${seg(hookId)}`, { method: 'DELETE' }).catch((e: GitProviderError) => {
      if (!/not found/.test(e.message)) throw e; // already gone
    });
  }

  async commentOnPullRequest(account: GitAccount, repo: GitRepositoryRef, number: number, body: string): Promise<{ id: string }> {
    const made = await this.#call(accountOf(account), 'comment', `${repoPath(repo)}/pullrequests/${number}/comments`, { method: 'POST', body: { content: { raw: body } } });
    return { id: String(made.id) };
  }

  /**
   * The user's explicit permission on the repository (GET .../permissions-config/users/{uuid or
   * account_id}; the API needs repository admin): write or admin is write access; none set (404) is none.
   */
  async hasWriteAccess(account: GitAccount, repo: GitRepositoryRef, author: { id: string | null; login: string | null }): Promise<boolean> {
    if (!author.id) throw new GitProviderError('access', 'Bitbucket: the pull request names no author id (uuid or account_id) to check');
    const found = await this.#call(accountOf(account), 'access', `${repoPath(repo)}/permissions-config/users/${seg(author.id)}`).catch((e: GitProviderError) => {
      if (e.failure === 'missing') return null;
      throw e;
    });
    return found?.permission === 'write' || found?.permission === 'admin';
  }

  /** GET .../pullrequests/{id}: its source (repository, branch, commit: Bitbucket's short hash), destination branch, state and author. */
  async pullRequest(account: GitAccount, repo: GitRepositoryRef, number: number): Promise<GitPullRequest> {
    const body = await this.#call(accountOf(account), 'pullRequest', `${repoPath(repo)}/pullrequests/${number}`);
    const source = body?.source ?? {};
    // A fork deleted since leaves the source without a repository: nothing Berth could clone.
    if (!source.repository?.full_name || !source.branch?.name || !source.commit?.hash)
      throw new GitProviderError('pullRequest', `Bitbucket: pull request #${number} names no source repository, branch and commit`);
    return {
      number: Number(body.id),
      state: body.state === 'OPEN' ? 'open' : 'closed',
      headRepository: String(source.repository.full_name),
      headBranch: String(source.branch.name),
      headSha: String(source.commit.hash),
      baseBranch: String(body.destination?.branch?.name ?? ''),
      author: { id: body.author?.uuid ?? body.author?.account_id ?? null, login: body.author?.nickname ?? body.author?.display_name ?? null },
    };
  }

  /** A pull request comment's content replaced (PUT .../pullrequests/:id/comments/:comment_id). */
  async updatePullRequestComment(account: GitAccount, repo: GitRepositoryRef, number: number, commentId: string, body: string): Promise<void> {
    await this.#call(accountOf(account), 'comment', `${repoPath(repo)}/pullrequests/${number}/comments/${seg(commentId)}`, { method: 'PUT', body: { content: { raw: body } } });
  }
}
