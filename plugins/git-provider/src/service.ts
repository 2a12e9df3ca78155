// The organization's connected git accounts: records in, views out (secrets sealed, never
// answered), and the calls that go through the account's git provider (repositories,
// branches, testConnection, clone credentials). A record of another organization is NOT_FOUND.
import { badRequest, conflict, forbidden, GitProviderError, iso, newId, notFound, type Cradle, type EntityManager, type GitAccount, type GitProvider, type ProviderRegistry, type SecretBox } from '@berth/core';
import { GitProviderRecord, GithubRecord, type GitProviderRow, type GithubRow } from './entities.ts';
import type { GithubRowView, GithubUpdateInput, GithubView, GitProviderListed, GitProviderView } from './schemas.ts';

/** What a git fetcher (source.git) offers beyond resolve: `git ls-remote` with a clone credential. */
interface RemoteHeads {
  remoteHeads(request: { url: string; credential?: import('@berth/core').CloneCredential | null; signal: AbortSignal }): Promise<{ name: string; commit: string }[]>;
}

/** The columns of the github record that are sealed. */
const GITHUB_SECRETS = ['githubClientSecret', 'githubPrivateKey', 'githubWebhookSecret'] as const;

export interface NewGithub {
  name: string;
  githubAppName: string | null;
  githubAppId: number | null;
  githubClientId: string | null;
  githubClientSecret: string | null;
  githubWebhookSecret: string | null;
  githubPrivateKey: string | null;
  githubInstallationId?: string | null;
  githubUrl: string;
}

export const providerView = (r: GitProviderRow): GitProviderView => ({
  gitProviderId: r.gitProviderId, name: r.name, providerType: r.providerType, createdAt: iso(r.createdAt)!,
  organizationId: r.organizationId, userId: r.userId, sharedWithOrganization: r.sharedWithOrganization,
});

export const githubRowView = (g: GithubRow): GithubRowView => ({
  githubId: g.githubId, gitProviderId: g.gitProviderId, githubAppName: g.githubAppName ?? null, githubAppId: g.githubAppId ?? null,
  githubClientId: g.githubClientId ?? null, githubClientSecret: null, githubInstallationId: g.githubInstallationId ?? null,
  githubPrivateKey: null, githubWebhookSecret: null, githubUrl: g.githubUrl,
});

const configured = (g: GithubRow) => Boolean(g.githubAppId && g.githubPrivateKey && g.githubInstallationId);

/** The clone URL of a repository below a provider's web URL: `<base>/<owner>/<name>.git` (GitHub, GitLab, Gitea and Bitbucket alike). */
export const cloneUrlOf = (baseUrl: string, owner: string, name: string) => `${baseUrl.replace(/\/+$/, '')}/${owner}/${name}.git`;

export class GitProviderService {
  readonly #secrets: () => SecretBox;
  readonly #providers: () => ProviderRegistry;
  readonly #source: () => unknown;

  constructor(deps: { secrets: () => SecretBox; providers: () => ProviderRegistry; gitFetcher: () => unknown }) {
    this.#secrets = deps.secrets;
    this.#providers = deps.providers;
    this.#source = deps.gitFetcher;
  }

  provider(type: string): GitProvider {
    if (!this.#providers().has('git', type)) throw badRequest(`No git provider "${type}" is enabled on this instance (providers.git.${type})`);
    return this.#providers().get('git', type);
  }

  // ------------------------------------------------------------ records
  async #provider(gitProviderId: string, organizationId: string, em: EntityManager): Promise<GitProviderRow> {
    const row = await em.findOne(GitProviderRecord, { gitProviderId, organizationId });
    if (!row) throw notFound('Git provider');
    return row;
  }

  /** The github record and its provider row, within the organization. */
  async github(githubId: string, organizationId: string, em: EntityManager): Promise<{ github: GithubRow; provider: GitProviderRow }> {
    const github = await em.findOne(GithubRecord, { githubId });
    const provider = github && await em.findOne(GitProviderRecord, { gitProviderId: github.gitProviderId, organizationId });
    if (!github || !provider) throw notFound('Github Provider');
    return { github, provider };
  }

  /** The connection a workload's githubId names, as its `one` joins it (no secret); null when it names none of the organization's. */
  async githubRelation(githubId: unknown, organizationId: string, em: EntityManager) {
    if (typeof githubId !== 'string' || !githubId) return null;
    const found = await this.github(githubId, organizationId, em).catch(() => null);
    if (!found) return null;
    const { githubId: id, githubAppName, githubAppId, githubClientId, githubInstallationId, githubUrl, gitProviderId } = githubRowView(found.github);
    return { githubId: id, githubAppName, githubAppId, githubClientId, githubInstallationId, githubUrl, gitProviderId };
  }

  /** The account the git provider is called with: settings in clear, secrets opened. */
  githubAccount(g: GithubRow): GitAccount {
    const open = (v: string | null | undefined) => (v ? this.#secrets().decrypt(v) : null);
    return {
      settings: { githubUrl: g.githubUrl, githubAppId: g.githubAppId ?? null, githubInstallationId: g.githubInstallationId ?? null, githubAppName: g.githubAppName ?? null },
      secrets: Object.fromEntries(GITHUB_SECRETS.map(k => [k, open(g[k])])),
    };
  }

  async createGithub(input: NewGithub, organizationId: string, userId: string, em: EntityManager): Promise<GithubView> {
    const seal = (v: string | null) => (v ? this.#secrets().encrypt(v) : null);
    const provider = em.create(GitProviderRecord, {
      gitProviderId: newId(), name: input.name, providerType: 'github', organizationId, userId, sharedWithOrganization: false, createdAt: new Date(),
    });
    const github = em.create(GithubRecord, {
      githubId: newId(), gitProviderId: provider.gitProviderId, githubAppName: input.githubAppName, githubAppId: input.githubAppId,
      githubClientId: input.githubClientId, githubClientSecret: seal(input.githubClientSecret), githubInstallationId: input.githubInstallationId ?? null,
      githubPrivateKey: seal(input.githubPrivateKey), githubWebhookSecret: seal(input.githubWebhookSecret), githubUrl: input.githubUrl,
    });
    await em.flush();
    return { ...githubRowView(github), gitProvider: providerView(provider) };
  }

  /** The manifest flow's second step: the App was installed; its installation id completes the record. */
  async setGithubInstallation(githubId: string, installationId: string, organizationId: string, em: EntityManager): Promise<void> {
    const { github } = await this.github(githubId, organizationId, em);
    github.githubInstallationId = installationId;
    await em.flush();
  }

  // ------------------------------------------------------------ gitProvider.*
  /** Newest first, each with its type's record. */
  async all(organizationId: string, userId: string, em: EntityManager): Promise<GitProviderListed[]> {
    const rows = await em.find(GitProviderRecord, { organizationId }, { orderBy: { createdAt: 'desc', gitProviderId: 'asc' } });
    const githubs = rows.length ? await em.find(GithubRecord, { gitProviderId: { $in: rows.map(r => r.gitProviderId) } }) : [];
    return rows.map(r => {
      const g = githubs.find(x => x.gitProviderId === r.gitProviderId);
      return { ...providerView(r), isOwner: r.userId === userId, github: g ? { ...githubRowView(g), isConfigured: configured(g) } : null, gitlab: null, bitbucket: null, gitea: null };
    });
  }

  async toggleShare(gitProviderId: string, shared: boolean, organizationId: string, userId: string, em: EntityManager): Promise<GitProviderView> {
    const row = await this.#provider(gitProviderId, organizationId, em);
    if (row.userId !== userId) throw forbidden('Only the owner can share this provider');
    row.sharedWithOrganization = shared;
    await em.flush();
    return providerView(row);
  }

  /** Deletes the connection, unless a workload deploys from it: then the refusal lists them. */
  async remove(gitProviderId: string, organizationId: string, em: EntityManager): Promise<{ success: boolean }> {
    const row = await this.#provider(gitProviderId, organizationId, em);
    const github = await em.findOne(GithubRecord, { gitProviderId });
    if (github) {
      const users = await this.#usersOf('githubId', github.githubId, em);
      if (users.length) throw conflict(`The provider is in use by ${users.join(', ')}: point them at another source first`);
    }
    await em.nativeDelete(GitProviderRecord, { gitProviderId: row.gitProviderId, organizationId });
    return { success: true };
  }

  /** The applications and compose stacks whose `field` names the record (their appNames). */
  async #usersOf(field: string, id: string, em: EntityManager): Promise<string[]> {
    const out: string[] = [];
    // kind-names: the kinds whose records carry a git provider's fields (their settings JSON), read by table.
    for (const [table, what] of [['applications', 'application'], ['compose_stacks', 'compose stack']] as const) { // kind-names: as above
      const present = await em.getConnection().execute(`select to_regclass(?) as t`, [table]);
      if (!present[0]?.t) continue;
      const rows = await em.getConnection().execute(`select app_name from "${table}" where settings->>? = ?`, [field, id]);
      out.push(...rows.map(r => `${what} ${String(r.app_name)}`));
    }
    return out;
  }

  // ------------------------------------------------------------ github.*
  async githubOne(githubId: string, organizationId: string, em: EntityManager): Promise<GithubView> {
    const { github, provider } = await this.github(githubId, organizationId, em);
    return { ...githubRowView(github), gitProvider: providerView(provider) };
  }

  /** The configured GitHub connections (App id, key and installation set). */
  async githubProviders(organizationId: string, em: EntityManager): Promise<{ githubId: string; githubUrl: string; gitProvider: GitProviderView }[]> {
    const rows = await em.find(GitProviderRecord, { organizationId, providerType: 'github' }, { orderBy: { createdAt: 'desc', gitProviderId: 'asc' } });
    const githubs = rows.length ? await em.find(GithubRecord, { gitProviderId: { $in: rows.map(r => r.gitProviderId) } }) : [];
    return rows.flatMap(r => {
      const g = githubs.find(x => x.gitProviderId === r.gitProviderId);
      return g && configured(g) ? [{ githubId: g.githubId, githubUrl: g.githubUrl, gitProvider: providerView(r) }] : [];
    });
  }

  async githubRepositories(githubId: string, organizationId: string, em: EntityManager) {
    const { github } = await this.github(githubId, organizationId, em);
    const repos = await this.#call(() => this.provider('github').listRepositories(this.githubAccount(github)));
    return repos.map(r => ({ id: Number(r.id), name: r.name, full_name: `${r.owner}/${r.name}`, owner: { login: r.owner }, private: r.private, clone_url: r.cloneUrl, default_branch: r.defaultBranch }));
  }

  async githubBranches(input: { githubId?: string; owner: string; repo: string }, organizationId: string, em: EntityManager) {
    if (!input.githubId) return [];
    const { github } = await this.github(input.githubId, organizationId, em);
    const branches = await this.#call(() => this.provider('github').listBranches(this.githubAccount(github), { owner: input.owner, name: input.repo }));
    return branches.map(b => ({ name: b.name, commit: { sha: b.commit } }));
  }

  /**
   * The path a deploy takes, both halves: the API lists the repositories, then `git ls-remote` runs
   * with a fresh clone credential on the first one. A failure names its step; success answers as the peer.
   */
  async githubTestConnection(githubId: string, organizationId: string, em: EntityManager): Promise<string> {
    const { github } = await this.github(githubId, organizationId, em);
    const provider = this.provider('github');
    const account = this.githubAccount(github);
    const repos = await this.#call(() => provider.listRepositories(account));
    const first = repos[0];
    if (first) {
      const fetcher = this.#source() as Partial<RemoteHeads> | null;
      if (fetcher?.remoteHeads) {
        const credential = await this.#call(() => provider.cloneCredential(account, { owner: first.owner, name: first.name }));
        try {
          await fetcher.remoteHeads({ url: first.cloneUrl, credential, signal: AbortSignal.timeout(60_000) });
        } catch (e) {
          throw badRequest(`clone: git cannot read ${first.owner}/${first.name} with the provider's credential: ${(e as Error).message}`);
        }
      }
    }
    return `Found ${repos.length} repositories`;
  }

  async githubUpdate(input: GithubUpdateInput, organizationId: string, em: EntityManager): Promise<boolean> {
    const { github, provider } = await this.github(input.githubId, organizationId, em);
    if (provider.gitProviderId !== input.gitProviderId) throw notFound('Git provider');
    provider.name = input.name;
    github.githubAppName = input.githubAppName;
    await em.flush();
    return true;
  }

  /** A provider's failure as a 400 whose message starts with the failing step. */
  async #call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof GitProviderError) throw badRequest(`${e.failure}: ${e.message}`);
      throw e;
    }
  }
}

/** gitProvider.* and github.* for one request: the service confined to the caller's organization. */
export const callerGitProviders = (service: GitProviderService) => ({ principal, em }: Cradle) => {
  const { organizationId, userId } = principal!;
  return {
    all: () => service.all(organizationId, userId, em),
    toggleShare: (gitProviderId: string, shared: boolean) => service.toggleShare(gitProviderId, shared, organizationId, userId, em),
    remove: (gitProviderId: string) => service.remove(gitProviderId, organizationId, em),
    githubOne: (githubId: string) => service.githubOne(githubId, organizationId, em),
    githubProviders: () => service.githubProviders(organizationId, em),
    githubRepositories: (githubId: string) => service.githubRepositories(githubId, organizationId, em),
    githubBranches: (input: { githubId?: string; owner: string; repo: string }) => service.githubBranches(input, organizationId, em),
    githubTestConnection: (githubId: string) => service.githubTestConnection(githubId, organizationId, em),
    githubUpdate: (input: GithubUpdateInput) => service.githubUpdate(input, organizationId, em),
  };
};

declare module '@berth/core' {
  interface Cradle {
    /** The git provider records and the calls through their providers. */
    gitProviders: GitProviderService;
    /** gitProvider.* and github.* for the current request's caller (request scope only). */
    callerGitProviders: ReturnType<ReturnType<typeof callerGitProviders>>;
  }
}
