// A GitHub App on github.com or on a GitHub Enterprise server, through @octokit/rest with
// @octokit/auth-app: every call signs the App's JWT (RS256, the stored private key) and mints
// the installation token it needs, so no token outlives its use in Berth. The SDKs are imported
// on the first call, never when the provider is merely enabled.
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
import { githubConnection, githubSave, type ManifestApp } from './connection.ts';
import { githubDeliveries } from './deliveries.ts';
import type { Octokit } from '@octokit/rest';

const GITHUB_COM = 'https://github.com';

/** A client for one use, and the installation token it minted (minted on first need). */
interface GithubClient {
  octokit: Octokit;
  installationToken(): Promise<{ token: string; expiresAt: string }>;
}

/** The account's fields as the github record stores them (the peer's names). */
interface GithubApp {
  /** The web URL: https://github.com, or a GitHub Enterprise server's. */
  githubUrl: string;
  appId: string;
  installationId: number;
  privateKey: string;
}

function appOf(account: GitAccount): GithubApp {
  const text = (v: unknown) => (v === null || v === undefined ? '' : String(v));
  const githubUrl = (text(account.settings.githubUrl) || GITHUB_COM).replace(/\/+$/, '');
  const appId = text(account.settings.githubAppId);
  const installationId = Number(account.settings.githubInstallationId);
  const privateKey = text(account.secrets.githubPrivateKey);
  if (!appId) throw new GitProviderError('credentials', 'GitHub: the account has no App id (githubAppId)');
  if (!Number.isInteger(installationId) || installationId <= 0) throw new GitProviderError('credentials', 'GitHub: the App is not installed (no githubInstallationId)');
  if (!privateKey) throw new GitProviderError('credentials', 'GitHub: the account has no App private key (githubPrivateKey)');
  try {
    new URL(githubUrl);
  } catch {
    throw new GitProviderError('connect', `GitHub: "${githubUrl}" is not a URL (githubUrl)`);
  }
  return { githubUrl, appId, installationId, privateKey };
}

/** The REST API of a web URL: api.github.com for github.com, /api/v3 on an Enterprise server. */
export const apiUrlOf = (githubUrl: string) => (githubUrl === GITHUB_COM ? 'https://api.github.com' : `${githubUrl}/api/v3`);

/** Octokit's errors as the contract's: the step, and what GitHub said (never the request's headers). */
function failed(step: GitFailure, e: unknown): GitProviderError {
  if (e instanceof GitProviderError) return e;
  const { status, message, cause } = e as { status?: number; message?: string; cause?: { message?: string; cause?: { message?: string; code?: string } } };
  // Octokit reports a request that reached no server as a 500 whose cause is fetch's failure.
  if (status === undefined || cause?.message === 'fetch failed') {
    return new GitProviderError('connect', `GitHub cannot be reached: ${cause?.cause?.code ?? cause?.cause?.message ?? message ?? String(e)}`, { cause: e });
  }
  const said = (message ?? String(e)).split('\n')[0]!.replace(/ - https:\/\/docs\.github\.com\S*/, '');
  if (status === 401 || /private key|secretOrPrivateKey|PEM|DECODER/i.test(said)) return new GitProviderError('credentials', `GitHub refused the App's credentials: ${said}`, { cause: e });
  if (status === 404 || status === 422) return new GitProviderError(step === 'commit' ? 'missing' : step, `GitHub: not found (${said})`, { cause: e });
  return new GitProviderError(step, `GitHub answered ${status}: ${said}`, { cause: e });
}

export class GithubProvider implements GitProvider {
  readonly id = 'github';
  readonly label = 'GitHub';
  /** The peer's columns of a workload deploying from it. */
  readonly sourceFields: GitSourceFields = { id: 'githubId', owner: 'owner', repository: 'repository', branch: 'branch', buildPath: 'buildPath', save: githubSave };
  /** Its webhook deliveries (./deliveries.ts). */
  readonly deliveries: GitDeliveryReader = githubDeliveries;
  /** What a connection keeps, its App manifest flow and the peer's github.* wire (./connection.ts). */
  readonly connection: GitConnectionForm = githubConnection(this);

  /** A client for one use: its installation token is minted by the first request that needs it and dies with it. */
  async #client(app: GithubApp): Promise<GithubClient> {
    const [{ Octokit }, { createAppAuth }] = await Promise.all([import('@octokit/rest'), import('@octokit/auth-app')]);
    const auth = { appId: app.appId, privateKey: app.privateKey, installationId: app.installationId };
    const octokit = new Octokit({ authStrategy: createAppAuth, auth, baseUrl: apiUrlOf(app.githubUrl), userAgent: 'berth', log: { debug() {}, info() {}, warn() {}, error() {} } });
    return { octokit, installationToken: async () => (await octokit.auth({ type: 'installation' })) as { token: string; expiresAt: string } };
  }

  async #run<T>(account: GitAccount, step: GitFailure, fn: (client: GithubClient) => Promise<T>): Promise<T> {
    const app = appOf(account);
    try {
      return await fn(await this.#client(app));
    } catch (e) {
      throw failed(step, e);
    }
  }

  /**
   * The App manifest flow's last step: GitHub hands back a one-time `code` once the user created the
   * App from Berth's manifest; converting it answers the App's credentials, in the github record's
   * fields (githubAppName is the App's page, as the peer stores it). Needs no credential.
   */
  async convertManifest(githubUrl: string, code: string): Promise<ManifestApp> {
    const base = githubUrl.replace(/\/+$/, '');
    try {
      const { Octokit } = await import('@octokit/rest');
      const octokit = new Octokit({ baseUrl: apiUrlOf(base), userAgent: 'berth', log: { debug() {}, info() {}, warn() {}, error() {} } });
      const { data } = await octokit.rest.apps.createFromManifest({ code });
      return {
        name: data.name,
        githubAppName: data.html_url,
        githubAppId: data.id,
        githubClientId: data.client_id,
        githubClientSecret: data.client_secret,
        githubWebhookSecret: data.webhook_secret ?? null,
        githubPrivateKey: data.pem,
        githubUrl: base,
      };
    } catch (e) {
      throw failed('connect', e);
    }
  }

  async connect(account: GitAccount): Promise<GitAccountUpdate> {
    return this.#run(account, 'connect', async ({ octokit, installationToken }) => {
      const { data } = await octokit.rest.apps.getAuthenticated(); // the JWT alone: the App id and key
      await installationToken(); // the installation: the App is installed where the record says
      return { settings: { ...(data?.slug ? { githubAppName: data.slug } : {}) }, secrets: {} };
    });
  }

  /** Installation tokens are minted per use and never stored: nothing to renew. */
  async refresh(): Promise<GitAccountUpdate | null> {
    return null;
  }

  async listRepositories(account: GitAccount): Promise<GitRepository[]> {
    return this.#run(account, 'repositories', async ({ octokit }) => {
      const repos = await octokit.paginate(octokit.rest.apps.listReposAccessibleToInstallation, { per_page: 100 });
      return repos.map(r => ({ id: String(r.id), name: r.name, owner: r.owner.login, cloneUrl: r.clone_url, defaultBranch: r.default_branch ?? null, private: r.private }));
    });
  }

  async listBranches(account: GitAccount, repo: GitRepositoryRef): Promise<GitBranch[]> {
    return this.#run(account, 'branches', async ({ octokit }) => {
      const branches = await octokit.paginate(octokit.rest.repos.listBranches, { owner: repo.owner, repo: repo.name, per_page: 100 });
      return branches.map(b => ({ name: b.name, commit: b.commit.sha }));
    });
  }

  async resolveCommit(account: GitAccount, repo: GitRepositoryRef, ref: string): Promise<string> {
    return this.#run(account, 'commit', async ({ octokit }) => {
      // The sha media type answers the commit id alone, not the whole commit.
      const { data } = await octokit.request('GET /repos/{owner}/{repo}/commits/{ref}', { owner: repo.owner, repo: repo.name, ref, mediaType: { format: 'sha' } });
      const sha = String(data).trim();
      if (!/^[0-9a-f]{40}$/.test(sha)) throw new GitProviderError('commit', `GitHub answered no commit id for ${ref}`);
      return sha;
    });
  }

  async cloneCredential(account: GitAccount): Promise<CloneCredential> {
    const app = appOf(account);
    return this.#run(account, 'clone', async ({ installationToken }) => {
      const { token, expiresAt } = await installationToken();
      return { baseUrl: `${app.githubUrl}/`, username: 'x-access-token', password: token, expiresAt: expiresAt ? new Date(expiresAt) : null };
    });
  }

  async registerWebhook(account: GitAccount, repo: GitRepositoryRef, hook: { url: string; secret: string }): Promise<GitWebhook> {
    return this.#run(account, 'webhook', async ({ octokit }) => {
      const { data } = await octokit.rest.repos.createWebhook({
        owner: repo.owner,
        repo: repo.name,
        events: ['push'],
        active: true,
        config: { url: hook.url, secret: hook.secret, content_type: 'json', insecure_ssl: '0' },
      });
      return { id: String(data.id) };
    });
  }

  async removeWebhook(account: GitAccount, repo: GitRepositoryRef, hookId: string): Promise<void> {
    return this.#run(account, 'webhook', async ({ octokit }) => {
      await octokit.rest.repos.deleteWebhook({ owner: repo.owner, repo: repo.name, hook_id: Number(hookId) }).catch((e: { status?: number }) => {
        if (e.status !== 404) throw e; // already gone
      });
    });
  }

  async commentOnPullRequest(account: GitAccount, repo: GitRepositoryRef, number: number, body: string): Promise<{ id: string }> {
    return this.#run(account, 'comment', async ({ octokit }) => {
      const { data } = await octokit.rest.issues.createComment({ owner: repo.owner, repo: repo.name, issue_number: number, body });
      return { id: String(data.id) };
    });
  }

  /**
   * The collaborator permission of the user on the repository (GET .../collaborators/{username}/permission):
   * admin or write (maintain answers write) is write access; read, none, or no such user (404) is not.
   */
  async hasWriteAccess(account: GitAccount, repo: GitRepositoryRef, author: { id: string | null; login: string | null }): Promise<boolean> {
    if (!author.login) throw new GitProviderError('access', 'GitHub: the pull request names no author login to check');
    const login = author.login;
    return this.#run(account, 'access', async ({ octokit }) => {
      const found = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner: repo.owner, repo: repo.name, username: login }).catch((e: { status?: number }) => {
        if (e.status === 404) return null; // no such user
        throw e;
      });
      return found?.data.permission === 'admin' || found?.data.permission === 'write';
    });
  }

  /** GET .../pulls/{number}: its head (repository, branch, commit), base branch, state and author. */
  async pullRequest(account: GitAccount, repo: GitRepositoryRef, number: number): Promise<GitPullRequest> {
    return this.#run(account, 'pullRequest', async ({ octokit }) => {
      const { data } = await octokit.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: number }).catch((e: { status?: number }) => {
        if (e.status === 404) throw new GitProviderError('missing', `GitHub: ${repo.owner}/${repo.name} has no pull request #${number}`);
        throw e;
      });
      // A fork deleted since leaves the head without a repository: nothing Berth could clone.
      if (!data.head.repo) throw new GitProviderError('pullRequest', `GitHub: the head repository of pull request #${number} is gone`);
      return {
        number: data.number,
        state: data.state === 'open' ? 'open' : 'closed',
        headRepository: data.head.repo.full_name,
        headBranch: data.head.ref,
        headSha: data.head.sha,
        baseBranch: data.base.ref,
        author: { id: data.user ? String(data.user.id) : null, login: data.user?.login ?? null },
      };
    });
  }

  /** A pull request's comments are its issue's: issues.updateComment. */
  async updatePullRequestComment(account: GitAccount, repo: GitRepositoryRef, _number: number, commentId: string, body: string): Promise<void> {
    return this.#run(account, 'comment', async ({ octokit }) => {
      await octokit.rest.issues.updateComment({ owner: repo.owner, repo: repo.name, comment_id: Number(commentId), body });
    });
  }
}
