// GitLab (gitlab.com or a self-managed server) through @gitbeaker/rest, with the OAuth
// application's access token; the token is refreshed (grant_type=refresh_token) before it
// expires, and the new pair is answered for the record to store. gitlabInternalUrl, when set, is
// where Berth reaches the API and git (a server's address inside a private network); the
// record's gitlabUrl stays what users see. The SDK is imported on the first call only.
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
import { gitlabConnection, gitlabSave } from './connection.ts';
import { gitlabDeliveries } from './deliveries.ts';
import { oauthToken, text } from '@berth/provider-git-kit';

/** The SDK's client (a type only: the module is imported on first use). */
type Api = InstanceType<typeof import('@gitbeaker/rest').Gitlab>;

export const GITLAB_COM = 'https://gitlab.com';
/** GitLab's access level of the Developer role, the first that may push. */
const DEVELOPER = 30;

/** The account's fields as the gitlab record stores them (the peer's names). */
interface GitlabAccount {
  /** Where Berth reaches GitLab: gitlabInternalUrl when set, else gitlabUrl. */
  base: string;
  accessToken: string;
  refreshToken: string | null;
  applicationId: string | null;
  secret: string | null;
  redirectUri: string | null;
  /** Seconds since the epoch (the peer's expiresAt), or null. */
  expiresAt: number | null;
  groupName: string | null;
}

/** Where Berth reaches GitLab: gitlabInternalUrl when set, else gitlabUrl (an http(s) URL). */
function baseOf(account: GitAccount): string {
  const base = (text(account.settings.gitlabInternalUrl) || text(account.settings.gitlabUrl) || GITLAB_COM).replace(/\/+$/, '');
  try {
    const u = new URL(base);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('not http(s)');
  } catch {
    throw new GitProviderError('connect', `GitLab: "${base}" is not a URL (gitlabUrl)`);
  }
  return base;
}

function accountOf(account: GitAccount): GitlabAccount {
  const base = baseOf(account);
  const accessToken = text(account.secrets.accessToken);
  if (!accessToken) throw new GitProviderError('credentials', 'GitLab: the account is not authorized yet (no access token): finish the OAuth flow');
  const expires = Number(account.settings.expiresAt);
  return {
    base,
    accessToken,
    refreshToken: text(account.secrets.refreshToken) || null,
    applicationId: text(account.settings.applicationId) || null,
    secret: text(account.secrets.secret) || null,
    redirectUri: text(account.settings.redirectUri) || null,
    expiresAt: Number.isFinite(expires) && expires > 0 ? expires : null,
    groupName: text(account.settings.groupName) || null,
  };
}

/** gitbeaker's errors as the contract's: the step, and what GitLab said. */
function failed(step: GitFailure, e: unknown): GitProviderError {
  if (e instanceof GitProviderError) return e;
  const err = e as { message?: string; cause?: { description?: string; response?: { status?: number; headers?: Headers }; code?: string; cause?: { code?: string } } };
  const status = err.cause?.response?.status;
  if (status === undefined) {
    const code = err.cause?.code ?? err.cause?.cause?.code ?? (err as { code?: string }).code;
    return new GitProviderError('connect', `GitLab cannot be reached: ${code ?? err.message ?? String(e)}`, { cause: e });
  }
  const said = (err.cause?.description ?? err.message ?? '').split('\n')[0];
  // OAuth's reason (an expired token...) is in the WWW-Authenticate header; the body says only "invalid_token".
  const reason = /error_description="([^"]*)"/.exec(err.cause?.response?.headers?.get?.('www-authenticate') ?? '')?.[1];
  if (status === 401) return new GitProviderError('credentials', `GitLab refused the token: ${reason ?? said}`, { cause: e });
  if (status === 404) return new GitProviderError(step === 'commit' ? 'missing' : step, `GitLab: not found (${said})`, { cause: e });
  return new GitProviderError(step, `GitLab answered ${status}: ${said}`, { cause: e });
}

/** "group/sub/name": GitLab's path of a project, which every project call takes in place of its id. */
const projectPath = (repo: GitRepositoryRef) => `${repo.owner}/${repo.name}`;

export class GitlabProvider implements GitProvider {
  readonly id = 'gitlab';
  readonly label = 'GitLab';
  /** The peer's columns of a workload deploying from it. */
  readonly sourceFields: GitSourceFields = {
    id: 'gitlabId',
    owner: 'gitlabOwner',
    repository: 'gitlabRepository',
    branch: 'gitlabBranch',
    buildPath: 'gitlabBuildPath',
    path: 'gitlabPathNamespace',
    identity: ['gitlabProjectId'],
    save: gitlabSave,
  };
  /** Its webhook deliveries (./deliveries.ts). */
  readonly deliveries: GitDeliveryReader = gitlabDeliveries;
  /** What a connection keeps, its OAuth flow and the peer's gitlab.* wire (./connection.ts). */
  readonly connection: GitConnectionForm = gitlabConnection;

  async #api(a: GitlabAccount): Promise<Api> {
    const { Gitlab } = await import('@gitbeaker/rest');
    return new Gitlab({ host: a.base, oauthToken: a.accessToken, rateLimitDuration: 0, queryTimeout: 30_000 } as ConstructorParameters<typeof Gitlab>[0]);
  }

  async #run<T>(account: GitAccount, step: GitFailure, fn: (api: Api, a: GitlabAccount) => Promise<T>): Promise<T> {
    const a = accountOf(account);
    try {
      return await fn(await this.#api(a), a);
    } catch (e) {
      throw failed(step, e);
    }
  }

  async connect(account: GitAccount): Promise<GitAccountUpdate> {
    return this.#run(account, 'connect', async api => {
      await api.Users.showCurrentUser();
      return { settings: {}, secrets: {} };
    });
  }

  /** Exchanges the refresh token for a new pair when the access token expires within marginMs. */
  async refresh(account: GitAccount, marginMs: number): Promise<GitAccountUpdate | null> {
    const a = accountOf(account);
    if (a.expiresAt === null || a.expiresAt * 1000 - Date.now() > marginMs) return null;
    if (!a.refreshToken || !a.applicationId || !a.secret)
      throw new GitProviderError('credentials', 'GitLab: the token expires and the account has no refresh token, application id or secret to renew it');
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: a.refreshToken,
      client_id: a.applicationId,
      client_secret: a.secret,
      ...(a.redirectUri ? { redirect_uri: a.redirectUri } : {}),
    });
    return this.#token(a, form, 'refresh the token');
  }

  /**
   * The OAuth flow's last step (not part of the contract; the callback route calls it): GitLab's
   * one-time code, exchanged for the account's first token pair. redirectUri must be the one the
   * authorization was asked with.
   */
  async exchangeCode(account: GitAccount, code: string, redirectUri: string): Promise<GitAccountUpdate> {
    const base = baseOf(account);
    const [applicationId, secret] = [text(account.settings.applicationId), text(account.secrets.secret)];
    if (!applicationId || !secret) throw new GitProviderError('credentials', 'GitLab: the account has no OAuth application id or secret (applicationId, secret)');
    const form = new URLSearchParams({ grant_type: 'authorization_code', code, client_id: applicationId, client_secret: secret, redirect_uri: redirectUri });
    return this.#token({ base, refreshToken: null }, form, 'authorize Berth');
  }

  /** POST /oauth/token: the new pair, its expiry in seconds since the epoch. */
  #token(a: { base: string; refreshToken: string | null }, form: URLSearchParams, what: string): Promise<GitAccountUpdate> {
    return oauthToken('GitLab', `${a.base}/oauth/token`, form, what, a.refreshToken);
  }

  async listRepositories(account: GitAccount): Promise<GitRepository[]> {
    return this.#run(account, 'repositories', async (api, a) => {
      const projects = (await api.Projects.all({ membership: true, perPage: 100 })) as {
        id: number;
        path: string;
        namespace: { full_path: string };
        http_url_to_repo: string;
        default_branch?: string | null;
        visibility?: string;
      }[];
      const group = a.groupName?.toLowerCase();
      return projects
        .filter(p => !group || p.namespace.full_path.toLowerCase() === group || p.namespace.full_path.toLowerCase().startsWith(`${group}/`))
        .map(p => ({ id: String(p.id), name: p.path, owner: p.namespace.full_path, cloneUrl: p.http_url_to_repo, defaultBranch: p.default_branch ?? null, private: p.visibility !== 'public' }));
    });
  }

  async listBranches(account: GitAccount, repo: GitRepositoryRef): Promise<GitBranch[]> {
    return this.#run(account, 'branches', async api => {
      const branches = (await api.Branches.all(projectPath(repo), { perPage: 100 })) as { name: string; commit: { id: string } }[];
      return branches.map(b => ({ name: b.name, commit: b.commit.id }));
    });
  }

  async resolveCommit(account: GitAccount, repo: GitRepositoryRef, ref: string): Promise<string> {
    return this.#run(account, 'commit', async api => {
      const commit = (await api.Commits.show(projectPath(repo), ref)) as { id?: string };
      if (!commit.id || !/^[0-9a-f]{40}$/.test(commit.id)) throw new GitProviderError('commit', `GitLab answered no commit id for ${ref}`);
      return commit.id;
    });
  }

  /** The OAuth access token as basic auth for user "oauth2", for the hosts below the web URL (or the internal one). */
  async cloneCredential(account: GitAccount): Promise<CloneCredential> {
    const a = accountOf(account);
    return { baseUrl: `${a.base}/`, username: 'oauth2', password: a.accessToken, expiresAt: a.expiresAt ? new Date(a.expiresAt * 1000) : null };
  }

  async registerWebhook(account: GitAccount, repo: GitRepositoryRef, hook: { url: string; secret: string }): Promise<GitWebhook> {
    return this.#run(account, 'webhook', async api => {
      const made = (await api.ProjectHooks.add(projectPath(repo), hook.url, { pushEvents: true, mergeRequestsEvents: true, token: hook.secret, enableSslVerification: true })) as { id: number };
      return { id: String(made.id) };
    });
  }

  async removeWebhook(account: GitAccount, repo: GitRepositoryRef, hookId: string): Promise<void> {
    return this.#run(account, 'webhook', async api => {
      await api.ProjectHooks.remove(projectPath(repo), Number(hookId)).catch((e: { cause?: { response?: { status?: number } } }) => {
        if (e.cause?.response?.status !== 404) throw e; // already gone
      });
    });
  }

  async commentOnPullRequest(account: GitAccount, repo: GitRepositoryRef, number: number, body: string): Promise<{ id: string }> {
    return this.#run(account, 'comment', async api => {
      const note = (await api.MergeRequestNotes.create(projectPath(repo), number, body)) as { id: number };
      return { id: String(note.id) };
    });
  }

  /**
   * The user's membership of the project, inherited from its groups too (GET
   * /projects/:id/members/all/:user_id): access level 30 (Developer) or more is write access; no
   * member (404) is none.
   */
  async hasWriteAccess(account: GitAccount, repo: GitRepositoryRef, author: { id: string | null; login: string | null }): Promise<boolean> {
    const userId = Number(author.id);
    if (!Number.isSafeInteger(userId) || userId < 1) throw new GitProviderError('access', 'GitLab: the merge request names no user id to check');
    return this.#run(account, 'access', async api => {
      const member = (await api.ProjectMembers.show(projectPath(repo), userId, { includeInherited: true }).catch((e: { cause?: { response?: { status?: number } } }) => {
        if (e.cause?.response?.status === 404) return null; // not a member
        throw e;
      })) as { access_level?: number } | null;
      return Number(member?.access_level ?? 0) >= DEVELOPER;
    });
  }

  /**
   * GET /projects/:id/merge_requests/:iid: its source branch and head commit, target branch, state
   * and author; the source project's path (a fork's) from GET /projects/:source_project_id.
   */
  async pullRequest(account: GitAccount, repo: GitRepositoryRef, number: number): Promise<GitPullRequest> {
    return this.#run(account, 'pullRequest', async api => {
      const mr = (await api.MergeRequests.show(projectPath(repo), number).catch((e: { cause?: { response?: { status?: number } } }) => {
        if (e.cause?.response?.status === 404) throw new GitProviderError('missing', `GitLab: ${projectPath(repo)} has no merge request !${number}`);
        throw e;
      })) as { iid: number; state: string; source_branch: string; target_branch: string; sha: string; source_project_id: number; target_project_id: number; author?: { id: number; username: string } };
      const source = mr.source_project_id === mr.target_project_id ? projectPath(repo) : ((await api.Projects.show(mr.source_project_id)) as { path_with_namespace: string }).path_with_namespace;
      return {
        number: mr.iid,
        state: mr.state === 'opened' ? 'open' : 'closed',
        headRepository: source,
        headBranch: mr.source_branch,
        headSha: mr.sha,
        baseBranch: mr.target_branch,
        author: { id: mr.author ? String(mr.author.id) : null, login: mr.author?.username ?? null },
      };
    });
  }

  /** A merge request note edited in place (PUT .../merge_requests/:iid/notes/:id). */
  async updatePullRequestComment(account: GitAccount, repo: GitRepositoryRef, number: number, commentId: string, body: string): Promise<void> {
    return this.#run(account, 'comment', async api => {
      await api.MergeRequestNotes.edit(projectPath(repo), number, Number(commentId), { body });
    });
  }
}
