// The organization's connected git accounts: records in, views out (secrets sealed, never
// answered), and the calls that go through the account's git provider (repositories,
// branches, testConnection, clone credentials). A record of another organization is NOT_FOUND.
import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  badRequest,
  conflict,
  forbidden,
  GitProviderError,
  iso,
  newId,
  notFound,
  type Cradle,
  type EntityManager,
  type GitAccount,
  type GitProvider,
  type GitSourceFields,
  type GitPullRequest,
  type GitRepositoryRef,
  type OutboundGuard,
  type ProviderRegistry,
  type Role,
  type SecretBox,
} from '@berth/core';
import { repositoryParts } from './source.ts';
import { BitbucketRecord, GiteaRecord, GitProviderRecord, GithubRecord, GitlabRecord, type BitbucketRow, type GiteaRow, type GitProviderRow, type GithubRow, type GitlabRow } from './entities.ts';
import type {
  GiteaBranchesInput,
  GiteaCreateInput,
  GiteaRowView,
  GiteaUpdateInput,
  GiteaView,
  BitbucketBranchesInput,
  BitbucketCreateInput,
  BitbucketRowView,
  BitbucketTestInput,
  BitbucketUpdateInput,
  BitbucketView,
  GithubRowView,
  GithubUpdateInput,
  GithubView,
  GitlabBranchesInput,
  GitlabCreateInput,
  GitlabRowView,
  GitlabUpdateInput,
  GitlabView,
  GitProviderListed,
  GitProviderView,
} from './schemas.ts';

/** What a git fetcher (source.git) offers beyond resolve: `git ls-remote` with a clone credential. */
interface RemoteHeads {
  remoteHeads(request: { url: string; credential?: import('@berth/core').CloneCredential | null; signal: AbortSignal }): Promise<{ name: string; commit: string }[]>;
}

/** The columns of the github record that are sealed. */
const GITHUB_SECRETS = ['githubClientSecret', 'githubPrivateKey', 'githubWebhookSecret'] as const;
/** The columns of the gitlab record that are sealed. */
const GITLAB_SECRETS = ['secret', 'accessToken', 'refreshToken'] as const;
/** The columns of the bitbucket record that are sealed. */
const BITBUCKET_SECRETS = ['apiToken', 'appPassword'] as const;
/** The columns of the gitea record that are sealed. */
const GITEA_SECRETS = ['clientSecret', 'accessToken', 'refreshToken'] as const;
/** What an OAuth record (gitlab's, gitea's) keeps of its token pair. */
type OAuthRow = { accessToken?: string | null; refreshToken?: string | null; expiresAt?: number | null; redirectUri?: string | null };
/** A token is renewed when it expires within this margin (a deploy's clone must not outlive it). */
const REFRESH_MARGIN_MS = 10 * 60_000;

/** The workload field that names a connection, per provider type. */
export const CONNECTION_FIELDS = { githubId: 'github', gitlabId: 'gitlab', bitbucketId: 'bitbucket', giteaId: 'gitea' } as const;
export type ConnectionField = keyof typeof CONNECTION_FIELDS;

/** Who asks: an organization's owner or admin uses every connection of it; a member, those they made and those shared with the organization. */
export interface GitCaller {
  userId: string;
  role: Role;
}

/** Whether the caller may see and use the connection (no caller: Berth itself, e.g. a deploy, which runs whoever connected it). */
export const usable = (row: Pick<GitProviderRow, 'userId' | 'sharedWithOrganization'>, caller?: GitCaller | null): boolean =>
  !caller || caller.role !== 'member' || row.userId === caller.userId || row.sharedWithOrganization;

/** A member's refusal for a connection that is neither theirs nor shared; `field` is the input that named it. */
const notShared = (field: string) => forbidden(`${field}: this git provider connection is another member's and not shared with the organization (its owner may share it: gitProvider.toggleShare)`);

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
  gitProviderId: r.gitProviderId,
  name: r.name,
  providerType: r.providerType,
  createdAt: iso(r.createdAt)!,
  organizationId: r.organizationId,
  userId: r.userId,
  sharedWithOrganization: r.sharedWithOrganization,
});

export const githubRowView = (g: GithubRow): GithubRowView => ({
  githubId: g.githubId,
  gitProviderId: g.gitProviderId,
  githubAppName: g.githubAppName ?? null,
  githubAppId: g.githubAppId ?? null,
  githubClientId: g.githubClientId ?? null,
  githubClientSecret: null,
  githubInstallationId: g.githubInstallationId ?? null,
  githubPrivateKey: null,
  githubWebhookSecret: null,
  githubUrl: g.githubUrl,
});

export const gitlabRowView = (g: GitlabRow): GitlabRowView => ({
  gitlabId: g.gitlabId,
  gitlabUrl: g.gitlabUrl,
  gitlabInternalUrl: g.gitlabInternalUrl ?? null,
  applicationId: g.applicationId ?? null,
  redirectUri: g.redirectUri ?? null,
  secret: null,
  accessToken: null,
  refreshToken: null,
  groupName: g.groupName ?? null,
  expiresAt: g.expiresAt ?? null,
  gitProviderId: g.gitProviderId,
});

export const bitbucketRowView = (b: BitbucketRow): BitbucketRowView => ({
  bitbucketId: b.bitbucketId,
  bitbucketUsername: b.bitbucketUsername ?? null,
  bitbucketEmail: b.bitbucketEmail ?? null,
  appPassword: null,
  apiToken: null,
  bitbucketWorkspaceName: b.bitbucketWorkspaceName ?? null,
  gitProviderId: b.gitProviderId,
});

export const giteaRowView = (g: GiteaRow): GiteaRowView => ({
  giteaId: g.giteaId,
  giteaUrl: g.giteaUrl,
  giteaInternalUrl: g.giteaInternalUrl ?? null,
  redirectUri: g.redirectUri ?? null,
  clientId: g.clientId ?? null,
  clientSecret: null,
  gitProviderId: g.gitProviderId,
  accessToken: null,
  refreshToken: null,
  expiresAt: g.expiresAt ?? null,
  scopes: g.scopes ?? null,
  lastAuthenticatedAt: g.lastAuthenticatedAt ?? null,
  giteaUsername: g.giteaUsername ?? null,
  organizationName: g.organizationName ?? null,
});

/** The peer's: a GitLab connection is usable once the OAuth flow gave it both tokens. */
const gitlabAuthorized = (g: GitlabRow) => Boolean(g.accessToken && g.refreshToken);

const configured = (g: GithubRow) => Boolean(g.githubAppId && g.githubPrivateKey && g.githubInstallationId);

/** A git host's web (or internal) address: an http(s) URL without user, query or fragment, no trailing slash. */
export function webUrlOf(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw badRequest(`${field}: is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badRequest(`${field}: must be an http(s) URL`);
  if (url.username || url.password || url.search || url.hash) throw badRequest(`${field}: must be a plain web address (no user, query or fragment)`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The clone URL of a repository below a provider's web URL: `<base>/<owner>/<name>.git` (GitHub, GitLab, Gitea and Bitbucket alike). */
export const cloneUrlOf = (baseUrl: string, owner: string, name: string) => `${baseUrl.replace(/\/+$/, '')}/${owner}/${name}.git`;

export class GitProviderService {
  readonly #secrets: () => SecretBox;
  readonly #providers: () => ProviderRegistry;
  #keys: Set<string> | undefined;
  readonly #source: () => unknown;
  readonly #outbound: () => OutboundGuard | null;

  constructor(deps: { secrets: () => SecretBox; providers: () => ProviderRegistry; gitFetcher: () => unknown; outbound?: () => OutboundGuard | null }) {
    this.#outbound = deps.outbound ?? (() => null);
    this.#secrets = deps.secrets;
    this.#providers = deps.providers;
    this.#source = deps.gitFetcher;
  }

  /** Each URL given must be one the organization may reach (outboundAllow; a 400 naming the field). */
  async #reachable(urls: Record<string, string | null | undefined>, organizationId: string): Promise<void> {
    const guard = this.#outbound();
    if (!guard) return;
    for (const [field, url] of Object.entries(urls)) if (url) await guard.checkSaved(url, { field, organizationId });
  }

  /** The workload fields that name what to clone from an enabled forge; undefined for a source type no forge serves (a plain git URL, an image). */
  sourceFields(type: string): GitSourceFields | undefined {
    return this.#providers().has('git', type) ? this.#providers().get('git', type).sourceFields : undefined;
  }

  /** The workload fields that make its git source (every enabled forge's), whose change the rule of `assertMayChangeSource` guards. */
  #sourceKeys(): Set<string> {
    this.#keys ??= new Set([
      'sourceType',
      'gitlabProjectId',
      ...this.#providers()
        .all('git')
        .flatMap(({ sourceFields: f }) => (f ? [f.id, f.owner, f.repository, f.branch, ...(f.path ? [f.path] : []), ...(f.slug ? [f.slug] : [])] : [])),
    ]);
    return this.#keys;
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
  async github(githubId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<{ github: GithubRow; provider: GitProviderRow }> {
    const { record, provider } = await this.#typed(em.findOne(GithubRecord, { githubId }), 'Github Provider', organizationId, em, caller);
    return { github: record, provider };
  }

  /** The gitlab record and its provider row, within the organization. */
  async gitlab(gitlabId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<{ gitlab: GitlabRow; provider: GitProviderRow }> {
    const { record, provider } = await this.#typed(em.findOne(GitlabRecord, { gitlabId }), 'Gitlab Provider', organizationId, em, caller);
    return { gitlab: record, provider };
  }

  /** The bitbucket record and its provider row, within the organization. */
  async bitbucket(bitbucketId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<{ bitbucket: BitbucketRow; provider: GitProviderRow }> {
    const { record, provider } = await this.#typed(em.findOne(BitbucketRecord, { bitbucketId }), 'Bitbucket Provider', organizationId, em, caller);
    return { bitbucket: record, provider };
  }

  /** The gitea record and its provider row, within the organization. */
  async gitea(giteaId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<{ gitea: GiteaRow; provider: GitProviderRow }> {
    const { record, provider } = await this.#typed(em.findOne(GiteaRecord, { giteaId }), 'Gitea Provider', organizationId, em, caller);
    return { gitea: record, provider };
  }

  /** A type's record and its provider row when the provider row is the organization's; NOT_FOUND otherwise. */
  async #typed<R extends { gitProviderId: string }>(
    found: Promise<R | null>,
    what: string,
    organizationId: string,
    em: EntityManager,
    caller?: GitCaller,
  ): Promise<{ record: R; provider: GitProviderRow }> {
    const record = await found;
    const provider = record && (await em.findOne(GitProviderRecord, { gitProviderId: record.gitProviderId, organizationId }));
    if (!record || !provider) throw notFound(what);
    if (!usable(provider, caller)) throw notShared(`${provider.providerType}Id`);
    return { record, provider };
  }

  /**
   * Checks that a workload's githubId/gitlabId/bitbucketId/giteaId names a connection of the
   * organization (NOT_FOUND otherwise) that the caller may use (FORBIDDEN naming the field otherwise).
   */
  async connection(field: ConnectionField, id: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<GitProviderRow> {
    const type = CONNECTION_FIELDS[field];
    const find: Record<typeof type, () => Promise<{ provider: GitProviderRow }>> = {
      github: () => this.github(id, organizationId, em),
      gitlab: () => this.gitlab(id, organizationId, em),
      bitbucket: () => this.bitbucket(id, organizationId, em),
      gitea: () => this.gitea(id, organizationId, em),
    };
    const { provider } = await find[type]();
    if (!usable(provider, caller)) throw notShared(field);
    return provider;
  }

  /**
   * The peer's rule for an existing source: a member changes a workload's git source (its connection,
   * repository, branch or source type) only when they may use the connection it deploys from now.
   * `current` is the workload's stored fields (sourceType among them); keys whose value is unchanged
   * do not count, since clients send whole records.
   */
  async assertMayChangeSource(current: Record<string, unknown>, changes: Record<string, unknown>, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<void> {
    if (!caller || caller.role !== 'member') return;
    const keys = this.#sourceKeys();
    const touched = Object.entries(changes).some(([k, v]) => v !== undefined && keys.has(k) && (v ?? null) !== (current[k] ?? null));
    if (!touched) return;
    for (const field of Object.keys(CONNECTION_FIELDS) as ConnectionField[]) {
      const id = current[field];
      if (typeof id !== 'string' || !id) continue;
      const row = await this.connection(field, id, organizationId, em).catch(() => null); // a connection since removed binds nobody
      if (row && !usable(row, caller))
        throw forbidden(
          `${field}: this workload deploys from another member's git provider connection, not shared with the organization: only an owner or admin, or that member, may change its source`,
        );
    }
  }

  /** The account a workload's connection gives its provider (a GitLab token renewed first when it expires soon). */
  async accountFor(type: string, id: string, organizationId: string, em: EntityManager): Promise<GitAccount> {
    if (type === 'gitlab') return this.gitlabAccount((await this.gitlab(id, organizationId, em)).gitlab, em);
    if (type === 'bitbucket') return this.bitbucketAccount((await this.bitbucket(id, organizationId, em)).bitbucket);
    if (type === 'gitea') return this.giteaAccount((await this.gitea(id, organizationId, em)).gitea, em);
    return this.githubAccount((await this.github(id, organizationId, em)).github);
  }

  /**
   * The one comment kept on a pull (merge) request of the repository a workload's source fields
   * name: added when there is no `commentId` yet, else updated in place (added again when the
   * provider cannot update or the comment is gone); answers the comment's id.
   */
  async pullRequestComment(type: string, fields: Record<string, unknown>, organizationId: string, pr: { number: number; body: string; commentId: string | null }, em: EntityManager): Promise<string> {
    const names = this.sourceFields(type);
    if (!names) throw badRequest(`A ${type} source has no pull requests to comment on`);
    const { connectionId, repo, missing } = repositoryParts(names, fields);
    if (missing.length) throw badRequest(`The ${type} source is not complete: set ${missing.join(', ')}`);
    const provider = this.provider(type);
    const account = await this.accountFor(type, connectionId, organizationId, em);
    if (pr.commentId && provider.updatePullRequestComment) {
      const updated = await provider.updatePullRequestComment(account, repo, pr.number, pr.commentId, pr.body).then(
        () => true,
        (e: unknown) => {
          if (!(e instanceof GitProviderError) || e.failure === 'connect' || e.failure === 'credentials') throw e;
          return false; // the comment is gone: a new one
        },
      );
      if (updated) return pr.commentId;
    }
    return (await provider.commentOnPullRequest(account, repo, pr.number, pr.body)).id;
  }

  /**
   * Whether a pull request's author may push to the repository a workload's source fields name (the
   * provider's collaborator permission), asked through the same connection; null for a source type
   * with no provider API (a plain git URL).
   * The provider's refusal or failure is thrown (its message names the step).
   */
  async writeAccess(type: string, fields: Record<string, unknown>, organizationId: string, author: { id: string | null; login: string | null }, em: EntityManager): Promise<boolean | null> {
    const names = this.sourceFields(type);
    if (!names) return null;
    const provider = this.provider(type);
    const { connectionId, repo, missing } = repositoryParts(names, fields);
    if (missing.length) throw badRequest(`The ${type} source is not complete: set ${missing.join(', ')}`);
    const account = await this.accountFor(type, connectionId, organizationId, em);
    return provider.hasWriteAccess(account, repo, author);
  }

  /**
   * The source fields that make a deploy clone another repository of the same service through the
   * same connection (a fork's head, `owner/name` or GitLab's whole path); null for a type with none.
   */
  repositoryFields(type: string, repository: string): Record<string, string> | null {
    const names = this.sourceFields(type);
    const parts = repository.split('/');
    // Names as the services allow them (GitLab's groups nest); no empty, "." or ".." segment.
    if (!names || parts.length < 2 || (!names.path && parts.length !== 2) || repository.length > 255 || parts.some(x => !/^[A-Za-z0-9_.-]+$/.test(x) || /^\.\.?$/.test(x))) return null;
    const [owner, name] = [parts.slice(0, -1).join('/'), parts.at(-1)!];
    return { [names.owner]: owner, [names.repository]: name, ...(names.path ? { [names.path]: repository } : {}), ...(names.slug ? { [names.slug]: name } : {}) };
  }

  /** An account: `settings` as given, the record's sealed `keys` opened. */
  #account<K extends string>(settings: GitAccount['settings'], keys: readonly K[], row: Partial<Record<K, string | null>>): GitAccount {
    const open = (v: string | null | undefined) => (v ? this.#secrets().decrypt(v) : null);
    return { settings, secrets: Object.fromEntries(keys.map(k => [k, open(row[k])])) };
  }

  /** The account Bitbucket is called with; `override` (testConnection's fields) replaces the record's for one call. */
  bitbucketAccount(b: BitbucketRow, override: Partial<Record<'bitbucketUsername' | 'bitbucketEmail' | 'bitbucketWorkspaceName' | 'apiToken' | 'appPassword', string>> = {}): GitAccount {
    const account = this.#account(
      {
        bitbucketUsername: override.bitbucketUsername || b.bitbucketUsername || null,
        bitbucketEmail: override.bitbucketEmail || b.bitbucketEmail || null,
        bitbucketWorkspaceName: override.bitbucketWorkspaceName || b.bitbucketWorkspaceName || null,
      },
      BITBUCKET_SECRETS,
      b,
    );
    if (override.apiToken || override.appPassword) account.secrets = { apiToken: override.apiToken || null, appPassword: override.appPassword || null };
    return account;
  }

  /** The Bitbucket connection a workload's bitbucketId names, as its `one` joins it (no token or password); null when it names none of the organization's. */
  async bitbucketRelation(bitbucketId: unknown, organizationId: string, em: EntityManager) {
    const found = typeof bitbucketId === 'string' && bitbucketId ? await this.bitbucket(bitbucketId, organizationId, em).catch(() => null) : null;
    if (!found) return null;
    const { appPassword: _p, apiToken: _t, ...rest } = bitbucketRowView(found.bitbucket);
    return rest;
  }

  /** The connection a workload's githubId names, as its `one` joins it (no secret); null when it names none of the organization's. */
  async githubRelation(githubId: unknown, organizationId: string, em: EntityManager) {
    const found = typeof githubId === 'string' && githubId ? await this.github(githubId, organizationId, em).catch(() => null) : null;
    if (!found) return null;
    const { githubId: id, githubAppName, githubAppId, githubClientId, githubInstallationId, githubUrl, gitProviderId } = githubRowView(found.github);
    return { githubId: id, githubAppName, githubAppId, githubClientId, githubInstallationId, githubUrl, gitProviderId };
  }

  /** The GitLab connection a workload's gitlabId names, as its `one` joins it (no secret or token); null when it names none of the organization's. */
  async gitlabRelation(gitlabId: unknown, organizationId: string, em: EntityManager) {
    const found = typeof gitlabId === 'string' && gitlabId ? await this.gitlab(gitlabId, organizationId, em).catch(() => null) : null;
    if (!found) return null;
    const { secret: _s, accessToken: _a, refreshToken: _r, ...rest } = gitlabRowView(found.gitlab);
    return rest;
  }

  /** The Gitea connection a workload's giteaId names, as its `one` joins it (no secret or token); null when it names none of the organization's. */
  async giteaRelation(giteaId: unknown, organizationId: string, em: EntityManager) {
    const found = typeof giteaId === 'string' && giteaId ? await this.gitea(giteaId, organizationId, em).catch(() => null) : null;
    if (!found) return null;
    const { clientSecret: _s, accessToken: _a, refreshToken: _r, giteaUsername: _u, organizationName: _o, ...rest } = giteaRowView(found.gitea);
    return rest;
  }

  /** The account the git provider is called with: settings in clear, secrets opened. */
  githubAccount(g: GithubRow): GitAccount {
    return this.#account(
      { githubUrl: g.githubUrl, githubAppId: g.githubAppId ?? null, githubInstallationId: g.githubInstallationId ?? null, githubAppName: g.githubAppName ?? null },
      GITHUB_SECRETS,
      g,
    );
  }

  /**
   * The account GitLab is called with: its token renewed (and the new pair sealed and stored) when it
   * expires within the margin. `groupName` overrides the record's filter (testConnection's).
   */
  async gitlabAccount(g: GitlabRow, em: EntityManager, groupName?: string): Promise<GitAccount> {
    const settings = () => ({
      gitlabUrl: g.gitlabUrl,
      gitlabInternalUrl: g.gitlabInternalUrl ?? null,
      applicationId: g.applicationId ?? null,
      redirectUri: g.redirectUri ?? null,
      groupName: groupName ?? g.groupName ?? null,
      expiresAt: g.expiresAt ?? null,
    });
    return this.#renewed('gitlab', g, settings, GITLAB_SECRETS, em);
  }

  /** The account Gitea is called with, its token renewed like GitLab's; `organizationName` overrides the record's filter (testConnection's). */
  async giteaAccount(g: GiteaRow, em: EntityManager, organizationName?: string): Promise<GitAccount> {
    const settings = () => ({
      giteaUrl: g.giteaUrl,
      giteaInternalUrl: g.giteaInternalUrl ?? null,
      clientId: g.clientId ?? null,
      redirectUri: g.redirectUri ?? null,
      organizationName: organizationName ?? g.organizationName ?? null,
      expiresAt: g.expiresAt ?? null,
    });
    return this.#renewed('gitea', g, settings, GITEA_SECRETS, em);
  }

  /** An OAuth account (GitLab's, Gitea's): its token renewed through the provider, and the new pair sealed and stored, when it expires within the margin. */
  async #renewed<K extends string>(
    type: string,
    row: OAuthRow & Partial<Record<K, string | null>>,
    settings: () => GitAccount['settings'],
    keys: readonly K[],
    em: EntityManager,
  ): Promise<GitAccount> {
    const account = () => this.#account(settings(), keys, row);
    if (!row.accessToken) return account();
    const renewed = await this.#call(() => this.provider(type).refresh(account(), REFRESH_MARGIN_MS));
    if (renewed) {
      this.#storeTokens(row, renewed);
      await em.flush();
    }
    return account();
  }

  #storeTokens(g: OAuthRow, update: { settings: Record<string, unknown>; secrets: Record<string, string | null> }): void {
    if (update.secrets.accessToken) g.accessToken = this.#secrets().encrypt(update.secrets.accessToken);
    if (update.secrets.refreshToken) g.refreshToken = this.#secrets().encrypt(update.secrets.refreshToken);
    if ('expiresAt' in update.settings) g.expiresAt = typeof update.settings.expiresAt === 'number' ? update.settings.expiresAt : null;
  }

  /** The OAuth flow's return (GitLab's or Gitea's): the code exchanged for the first token pair, stored sealed. */
  async authorize(type: 'gitlab' | 'gitea', id: string, code: string, redirectUri: (row: { redirectUri?: string | null }) => string, organizationId: string, em: EntityManager): Promise<void> {
    const provider = this.provider(type) as GitProvider & {
      exchangeCode?(account: GitAccount, code: string, redirectUri: string): Promise<{ settings: Record<string, unknown>; secrets: Record<string, string | null> }>;
    };
    if (!provider.exchangeCode) throw badRequest(`The enabled ${provider.label} provider cannot complete an OAuth authorization`);
    const row = type === 'gitlab' ? (await this.gitlab(id, organizationId, em)).gitlab : (await this.gitea(id, organizationId, em)).gitea;
    const account = type === 'gitlab' ? await this.gitlabAccount(row as GitlabRow, em) : await this.giteaAccount(row as GiteaRow, em);
    this.#storeTokens(row, await provider.exchangeCode(account, code, redirectUri(row)));
    await em.flush();
  }

  async createGithub(input: NewGithub, organizationId: string, userId: string, em: EntityManager): Promise<GithubView> {
    await this.#reachable({ githubUrl: input.githubUrl }, organizationId);
    const seal = (v: string | null) => (v ? this.#secrets().encrypt(v) : null);
    const provider = em.create(GitProviderRecord, { gitProviderId: newId(), name: input.name, providerType: 'github', organizationId, userId, sharedWithOrganization: false, createdAt: new Date() });
    const github = em.create(GithubRecord, {
      githubId: newId(),
      gitProviderId: provider.gitProviderId,
      githubAppName: input.githubAppName,
      githubAppId: input.githubAppId,
      githubClientId: input.githubClientId,
      githubClientSecret: seal(input.githubClientSecret),
      githubInstallationId: input.githubInstallationId ?? null,
      githubPrivateKey: seal(input.githubPrivateKey),
      githubWebhookSecret: seal(input.githubWebhookSecret),
      githubUrl: input.githubUrl,
    });
    await em.flush();
    return { ...githubRowView(github), gitProvider: providerView(provider) };
  }

  /** The manifest flow's second step: the App was installed; its installation id completes the record (of the organization, and one the caller may use: theirs or shared with them). */
  async setGithubInstallation(githubId: string, installationId: string, organizationId: string, em: EntityManager, caller: GitCaller): Promise<void> {
    const { github } = await this.github(githubId, organizationId, em, caller);
    github.githubInstallationId = installationId;
    await em.flush();
  }

  // ------------------------------------------------------------ gitProvider.*
  /** Newest first, each with its type's record. */
  async all(organizationId: string, caller: GitCaller, em: EntityManager): Promise<GitProviderListed[]> {
    const userId = caller.userId;
    const rows = (await em.find(GitProviderRecord, { organizationId }, { orderBy: { createdAt: 'desc', gitProviderId: 'asc' } })).filter(r => usable(r, caller));
    const ids = { gitProviderId: { $in: rows.map(r => r.gitProviderId) } };
    const [githubs, gitlabs, bitbuckets, giteas] = rows.length
      ? await Promise.all([em.find(GithubRecord, ids), em.find(GitlabRecord, ids), em.find(BitbucketRecord, ids), em.find(GiteaRecord, ids)])
      : [[], [], [], []];
    return rows.map(r => {
      const g = githubs.find(x => x.gitProviderId === r.gitProviderId);
      const l = gitlabs.find(x => x.gitProviderId === r.gitProviderId);
      const b = bitbuckets.find(x => x.gitProviderId === r.gitProviderId);
      const e = giteas.find(x => x.gitProviderId === r.gitProviderId);
      return {
        ...providerView(r),
        isOwner: r.userId === userId,
        github: g ? { ...githubRowView(g), isConfigured: configured(g) } : null,
        gitlab: l ? gitlabRowView(l) : null,
        bitbucket: b ? bitbucketRowView(b) : null,
        gitea: e ? giteaRowView(e) : null,
      };
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
  async remove(gitProviderId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<{ success: boolean }> {
    const row = await this.#provider(gitProviderId, organizationId, em);
    if (!usable(row, caller)) throw notShared('gitProviderId');
    // The record of the connection's type, and the workload field that names it.
    const kinds = [
      ['githubId', GithubRecord],
      ['gitlabId', GitlabRecord],
      ['bitbucketId', BitbucketRecord],
      ['giteaId', GiteaRecord],
    ] as const;
    const found = await Promise.all(kinds.map(async ([field, entity]) => [field, (await em.findOne(entity as typeof GithubRecord, { gitProviderId })) as Record<string, unknown> | null] as const));
    const hit = found.find(([, r]) => r);
    const named: [string, string] | null = hit ? [hit[0], String(hit[1]![hit[0]])] : null;
    const users = named ? await this.#usersOf(named[0], named[1], em) : [];
    if (users.length) throw conflict(`The provider is in use by ${users.join(', ')}: point them at another source first`);
    await em.nativeDelete(GitProviderRecord, { gitProviderId: row.gitProviderId, organizationId });
    return { success: true };
  }

  /** The applications and compose stacks whose `field` names the record (their appNames). */
  async #usersOf(field: string, id: string, em: EntityManager): Promise<string[]> {
    const out: string[] = [];
    // kind-names: the kinds whose records carry a git provider's fields (their settings JSON), read by table.
    const tables = { applications: 'application', compose_stacks: 'compose stack' }; // kind-names: as above
    for (const [table, what] of Object.entries(tables)) {
      const present = await em.getConnection().execute(`select to_regclass(?) as t`, [table]);
      if (!present[0]?.t) continue;
      const rows = await em.getConnection().execute(`select app_name from "${table}" where settings->>? = ?`, [field, id]);
      out.push(...rows.map(r => `${what} ${String(r.app_name)}`));
    }
    return out;
  }

  // ------------------------------------------------------------ github.*
  async githubOne(githubId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<GithubView> {
    const { github, provider } = await this.github(githubId, organizationId, em, caller);
    return { ...githubRowView(github), gitProvider: providerView(provider) };
  }

  /** The configured GitHub connections (App id, key and installation set). */
  async githubProviders(organizationId: string, em: EntityManager, caller?: GitCaller): Promise<{ githubId: string; githubUrl: string; gitProvider: GitProviderView }[]> {
    const rows = (await em.find(GitProviderRecord, { organizationId, providerType: 'github' }, { orderBy: { createdAt: 'desc', gitProviderId: 'asc' } })).filter(r => usable(r, caller));
    const githubs = rows.length ? await em.find(GithubRecord, { gitProviderId: { $in: rows.map(r => r.gitProviderId) } }) : [];
    return rows.flatMap(r => {
      const g = githubs.find(x => x.gitProviderId === r.gitProviderId);
      return g && configured(g) ? [{ githubId: g.githubId, githubUrl: g.githubUrl, gitProvider: providerView(r) }] : [];
    });
  }

  async githubRepositories(githubId: string, organizationId: string, em: EntityManager, caller?: GitCaller) {
    const { github } = await this.github(githubId, organizationId, em, caller);
    const repos = await this.#call(() => this.provider('github').listRepositories(this.githubAccount(github)));
    return repos.map(r => ({
      id: Number(r.id),
      name: r.name,
      full_name: `${r.owner}/${r.name}`,
      owner: { login: r.owner },
      private: r.private,
      clone_url: r.cloneUrl,
      default_branch: r.defaultBranch,
    }));
  }

  async githubBranches(input: { githubId?: string; owner: string; repo: string }, organizationId: string, em: EntityManager, caller?: GitCaller) {
    if (!input.githubId) return [];
    const { github } = await this.github(input.githubId, organizationId, em, caller);
    const branches = await this.#call(() => this.provider('github').listBranches(this.githubAccount(github), { owner: input.owner, name: input.repo }));
    return branches.map(b => ({ name: b.name, commit: { sha: b.commit } }));
  }

  /**
   * The path a deploy takes, both halves: the API lists the repositories, then `git ls-remote` runs
   * with a fresh clone credential on the first one. A failure names its step; success answers as the peer.
   */
  async githubTestConnection(githubId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<string> {
    const { github } = await this.github(githubId, organizationId, em, caller);
    return this.#testConnection('github', this.githubAccount(github));
  }

  /**
   * The path a deploy takes, both halves: the API lists the repositories, then `git ls-remote` runs
   * with a fresh clone credential on the first one. A failure names its step; success answers as the peer.
   */
  async #testConnection(type: string, account: GitAccount): Promise<string> {
    const provider = this.provider(type);
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

  async githubUpdate(input: GithubUpdateInput, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<boolean> {
    const { github, provider } = await this.github(input.githubId, organizationId, em, caller);
    if (provider.gitProviderId !== input.gitProviderId) throw notFound('Git provider');
    provider.name = input.name;
    github.githubAppName = input.githubAppName;
    await em.flush();
    return true;
  }

  // ------------------------------------------------------------ gitlab.*
  /** The peer's create: the OAuth application's fields (and, in the older variant, tokens); the owner is always the caller. */
  async createGitlab(input: GitlabCreateInput, organizationId: string, userId: string, em: EntityManager): Promise<GitlabView> {
    await this.#reachable({ gitlabUrl: input.gitlabUrl, gitlabInternalUrl: input.gitlabInternalUrl }, organizationId);
    const seal = (v: string | null | undefined) => (v ? this.#secrets().encrypt(v) : null);
    const provider = em.create(GitProviderRecord, { gitProviderId: newId(), name: input.name, providerType: 'gitlab', organizationId, userId, sharedWithOrganization: false, createdAt: new Date() });
    const gitlab = em.create(GitlabRecord, {
      gitlabId: newId(),
      gitProviderId: provider.gitProviderId,
      gitlabUrl: webUrlOf(input.gitlabUrl ?? 'https://gitlab.com', 'gitlabUrl'),
      gitlabInternalUrl: input.gitlabInternalUrl ? webUrlOf(input.gitlabInternalUrl, 'gitlabInternalUrl') : null,
      applicationId: input.applicationId || null,
      redirectUri: input.redirectUri || null,
      secret: seal(input.secret),
      accessToken: seal(input.accessToken),
      refreshToken: seal(input.refreshToken),
      groupName: input.groupName || null,
      expiresAt: input.expiresAt ?? null,
    });
    await em.flush();
    return { ...gitlabRowView(gitlab), gitProvider: providerView(provider) };
  }

  async gitlabOne(gitlabId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<GitlabView> {
    const { gitlab, provider } = await this.gitlab(gitlabId, organizationId, em, caller);
    return { ...gitlabRowView(gitlab), gitProvider: providerView(provider) };
  }

  /** The authorized GitLab connections (both tokens set), as the peer. */
  async gitlabProviders(organizationId: string, em: EntityManager, caller?: GitCaller): Promise<{ gitlabId: string; gitlabUrl: string; gitProvider: GitProviderView }[]> {
    const rows = (await em.find(GitProviderRecord, { organizationId, providerType: 'gitlab' }, { orderBy: { createdAt: 'desc', gitProviderId: 'asc' } })).filter(r => usable(r, caller));
    const gitlabs = rows.length ? await em.find(GitlabRecord, { gitProviderId: { $in: rows.map(r => r.gitProviderId) } }) : [];
    return rows.flatMap(r => {
      const g = gitlabs.find(x => x.gitProviderId === r.gitProviderId);
      return g && gitlabAuthorized(g) ? [{ gitlabId: g.gitlabId, gitlabUrl: g.gitlabUrl, gitProvider: providerView(r) }] : [];
    });
  }

  async gitlabRepositories(gitlabId: string, organizationId: string, em: EntityManager, caller?: GitCaller) {
    const { gitlab } = await this.gitlab(gitlabId, organizationId, em, caller);
    const account = await this.gitlabAccount(gitlab, em);
    const repos = await this.#call(() => this.provider('gitlab').listRepositories(account));
    return repos.map(r => ({ id: Number(r.id), name: r.name, url: `${r.owner}/${r.name}`, owner: { username: r.owner.split('/').pop()! } }));
  }

  /** Every branch of the project `id` names (its path read from the listing); none without gitlabId or id, as the peer. */
  async gitlabBranches(input: GitlabBranchesInput, organizationId: string, em: EntityManager, caller?: GitCaller) {
    if (!input.gitlabId) return [];
    const { gitlab } = await this.gitlab(input.gitlabId, organizationId, em, caller);
    if (!input.id) return [];
    const provider = this.provider('gitlab');
    const account = await this.gitlabAccount(gitlab, em);
    const project = (await this.#call(() => provider.listRepositories(account))).find(r => r.id === String(input.id));
    if (!project) throw notFound('Gitlab project');
    const branches = await this.#call(() => provider.listBranches(account, { owner: project.owner, name: project.name }));
    return branches.map(b => ({ name: b.name, commit: { id: b.commit } }));
  }

  /** No gitlabId names no connection: NOT_FOUND, as the older peer (its field was optional). */
  async gitlabTestConnection(input: { gitlabId?: string; groupName?: string }, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<string> {
    if (!input.gitlabId) throw notFound('Gitlab Provider');
    const { gitlab } = await this.gitlab(input.gitlabId, organizationId, em, caller);
    return this.#testConnection('gitlab', await this.gitlabAccount(gitlab, em, input.groupName || undefined));
  }

  async gitlabUpdate(input: GitlabUpdateInput, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<boolean> {
    const { gitlab, provider } = await this.gitlab(input.gitlabId, organizationId, em, caller);
    if (provider.gitProviderId !== input.gitProviderId) throw notFound('Git provider');
    await this.#reachable({ gitlabUrl: input.gitlabUrl, gitlabInternalUrl: input.gitlabInternalUrl }, organizationId);
    const seal = (v: string) => (v ? this.#secrets().encrypt(v) : null);
    provider.name = input.name;
    if (input.gitlabUrl !== undefined) gitlab.gitlabUrl = webUrlOf(input.gitlabUrl, 'gitlabUrl');
    if (input.gitlabInternalUrl !== undefined) gitlab.gitlabInternalUrl = input.gitlabInternalUrl ? webUrlOf(input.gitlabInternalUrl, 'gitlabInternalUrl') : null;
    for (const k of ['applicationId', 'redirectUri', 'groupName'] as const) if (input[k] !== undefined) gitlab[k] = input[k] || null;
    for (const k of GITLAB_SECRETS) if (input[k] !== undefined) gitlab[k] = seal(input[k]!);
    if (input.expiresAt !== undefined) gitlab.expiresAt = input.expiresAt;
    await em.flush();
    return true;
  }

  // ------------------------------------------------------------ bitbucket.*
  /** The peer's create: an API token with its e-mail, or an app password with its user name; sealed. The owner is always the caller. */
  async createBitbucket(input: BitbucketCreateInput, organizationId: string, userId: string, em: EntityManager): Promise<BitbucketView> {
    const seal = (v: string | null | undefined) => (v ? this.#secrets().encrypt(v) : null);
    const provider = em.create(GitProviderRecord, {
      gitProviderId: newId(),
      name: input.name,
      providerType: 'bitbucket',
      organizationId,
      userId,
      sharedWithOrganization: false,
      createdAt: new Date(),
    });
    const bitbucket = em.create(BitbucketRecord, {
      bitbucketId: newId(),
      gitProviderId: provider.gitProviderId,
      bitbucketUsername: input.bitbucketUsername || null,
      bitbucketEmail: input.bitbucketEmail || null,
      appPassword: seal(input.appPassword),
      apiToken: seal(input.apiToken),
      bitbucketWorkspaceName: input.bitbucketWorkspaceName || null,
    });
    await em.flush();
    return { ...bitbucketRowView(bitbucket), gitProvider: providerView(provider) };
  }

  async bitbucketOne(bitbucketId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<BitbucketView> {
    const { bitbucket, provider } = await this.bitbucket(bitbucketId, organizationId, em, caller);
    return { ...bitbucketRowView(bitbucket), gitProvider: providerView(provider) };
  }

  /** Every Bitbucket connection of the organization, as the peer. */
  async bitbucketProviders(organizationId: string, em: EntityManager, caller?: GitCaller): Promise<{ bitbucketId: string; gitProvider: GitProviderView }[]> {
    const rows = (await em.find(GitProviderRecord, { organizationId, providerType: 'bitbucket' }, { orderBy: { createdAt: 'desc', gitProviderId: 'asc' } })).filter(r => usable(r, caller));
    const records = rows.length ? await em.find(BitbucketRecord, { gitProviderId: { $in: rows.map(r => r.gitProviderId) } }) : [];
    return rows.flatMap(r => {
      const b = records.find(x => x.gitProviderId === r.gitProviderId);
      return b ? [{ bitbucketId: b.bitbucketId, gitProvider: providerView(r) }] : [];
    });
  }

  async bitbucketRepositories(bitbucketId: string, organizationId: string, em: EntityManager, caller?: GitCaller) {
    const { bitbucket } = await this.bitbucket(bitbucketId, organizationId, em, caller);
    const repos = await this.#call(() => this.provider('bitbucket').listRepositories(this.bitbucketAccount(bitbucket)));
    return repos.map(r => ({ name: r.name, url: r.cloneUrl.replace(/\.git$/, ''), slug: r.name, owner: { username: r.owner } }));
  }

  /** Every branch of the workspace's repository; none without bitbucketId, as the peer. */
  async bitbucketBranches(input: BitbucketBranchesInput, organizationId: string, em: EntityManager, caller?: GitCaller) {
    if (!input.bitbucketId) return [];
    const { bitbucket } = await this.bitbucket(input.bitbucketId, organizationId, em, caller);
    const branches = await this.#call(() => this.provider('bitbucket').listBranches(this.bitbucketAccount(bitbucket), { owner: input.owner, name: input.repo }));
    return branches.map(b => ({ name: b.name, commit: { sha: b.commit } }));
  }

  /** The same two steps as the others; the input's user, e-mail, workspace and credential (when given) replace the record's for the test. */
  async bitbucketTestConnection(input: BitbucketTestInput, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<string> {
    const { bitbucket } = await this.bitbucket(input.bitbucketId, organizationId, em, caller);
    const { workspaceName, bitbucketId: _id, ...override } = input;
    return this.#testConnection('bitbucket', this.bitbucketAccount(bitbucket, { ...override, ...(workspaceName ? { bitbucketWorkspaceName: workspaceName } : {}) }));
  }

  /** Answers the record as the peer (secrets null). */
  async bitbucketUpdate(input: BitbucketUpdateInput, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<BitbucketRowView> {
    const { bitbucket, provider } = await this.bitbucket(input.bitbucketId, organizationId, em, caller);
    if (provider.gitProviderId !== input.gitProviderId) throw notFound('Git provider');
    provider.name = input.name;
    for (const k of ['bitbucketUsername', 'bitbucketEmail', 'bitbucketWorkspaceName'] as const) if (input[k] !== undefined) bitbucket[k] = input[k] || null;
    for (const k of BITBUCKET_SECRETS) if (input[k] !== undefined) bitbucket[k] = input[k] ? this.#secrets().encrypt(input[k]) : null;
    await em.flush();
    return bitbucketRowView(bitbucket);
  }

  // ------------------------------------------------------------ gitea.*
  /** The peer's create: the OAuth application's fields (and tokens, when given); the owner is the caller. Answers as the peer: id, client id, URL. */
  async createGitea(input: GiteaCreateInput, organizationId: string, userId: string, em: EntityManager): Promise<{ giteaId: string; clientId: string; giteaUrl: string }> {
    await this.#reachable({ giteaUrl: input.giteaUrl, giteaInternalUrl: input.giteaInternalUrl }, organizationId);
    const provider = em.create(GitProviderRecord, { gitProviderId: newId(), name: input.name, providerType: 'gitea', organizationId, userId, sharedWithOrganization: false, createdAt: new Date() });
    const gitea = em.create(GiteaRecord, { giteaId: newId(), gitProviderId: provider.gitProviderId, giteaUrl: webUrlOf(input.giteaUrl, 'giteaUrl') });
    this.#setGitea(gitea, input);
    await em.flush();
    return { giteaId: gitea.giteaId, clientId: gitea.clientId ?? '', giteaUrl: gitea.giteaUrl };
  }

  /** The fields create and update share; secrets sealed, absent ones kept. */
  #setGitea(gitea: GiteaRow, input: Partial<GiteaUpdateInput>): void {
    if (input.giteaUrl !== undefined) gitea.giteaUrl = webUrlOf(input.giteaUrl, 'giteaUrl');
    if (input.giteaInternalUrl !== undefined) gitea.giteaInternalUrl = input.giteaInternalUrl ? webUrlOf(input.giteaInternalUrl, 'giteaInternalUrl') : null;
    for (const k of ['redirectUri', 'clientId', 'scopes', 'giteaUsername', 'organizationName'] as const) if (input[k] !== undefined) gitea[k] = input[k] || null;
    for (const k of GITEA_SECRETS) if (input[k] !== undefined) gitea[k] = input[k] ? this.#secrets().encrypt(input[k]) : null;
    for (const k of ['expiresAt', 'lastAuthenticatedAt'] as const) if (input[k] !== undefined) gitea[k] = input[k];
  }

  async giteaOne(giteaId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<GiteaView> {
    const { gitea, provider } = await this.gitea(giteaId, organizationId, em, caller);
    return { ...giteaRowView(gitea), gitProvider: providerView(provider) };
  }

  /** The Gitea connections whose OAuth application is set (client id and secret), as the peer. */
  async giteaProviders(organizationId: string, em: EntityManager, caller?: GitCaller): Promise<{ giteaId: string; gitProvider: GitProviderView }[]> {
    const rows = (await em.find(GitProviderRecord, { organizationId, providerType: 'gitea' }, { orderBy: { createdAt: 'desc', gitProviderId: 'asc' } })).filter(r => usable(r, caller));
    const records = rows.length ? await em.find(GiteaRecord, { gitProviderId: { $in: rows.map(r => r.gitProviderId) } }) : [];
    return rows.flatMap(r => {
      const g = records.find(x => x.gitProviderId === r.gitProviderId);
      return g?.clientId && g.clientSecret ? [{ giteaId: g.giteaId, gitProvider: providerView(r) }] : [];
    });
  }

  async giteaRepositories(giteaId: string, organizationId: string, em: EntityManager, caller?: GitCaller) {
    const { gitea } = await this.gitea(giteaId, organizationId, em, caller);
    const account = await this.giteaAccount(gitea, em);
    const repos = await this.#call(() => this.provider('gitea').listRepositories(account));
    return repos.map(r => ({ id: Number(r.id), name: r.name, url: `${r.owner}/${r.name}`, owner: { username: r.owner } }));
  }

  /** Every branch of owner/repositoryName; giteaId is required, as the peer (400 naming it). */
  async giteaBranches(input: GiteaBranchesInput, organizationId: string, em: EntityManager, caller?: GitCaller) {
    if (!input.giteaId) throw badRequest('giteaId: the Gitea provider is required');
    const { gitea } = await this.gitea(input.giteaId, organizationId, em, caller);
    const account = await this.giteaAccount(gitea, em);
    const branches = await this.#call(() => this.provider('gitea').listBranches(account, { owner: input.owner, name: input.repositoryName }));
    return branches.map(b => ({ id: b.name, name: b.name, commit: { id: b.commit } }));
  }

  /** The same two steps as the others; success stamps lastAuthenticatedAt, as the peer. No giteaId: NOT_FOUND. */
  async giteaTestConnection(input: { giteaId?: string; organizationName?: string }, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<string> {
    if (!input.giteaId) throw notFound('Gitea Provider');
    const { gitea } = await this.gitea(input.giteaId, organizationId, em, caller);
    const answer = await this.#testConnection('gitea', await this.giteaAccount(gitea, em, input.organizationName || undefined));
    gitea.lastAuthenticatedAt = Math.floor(Date.now() / 1000);
    await em.flush();
    return answer;
  }

  async giteaUpdate(input: GiteaUpdateInput, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<{ success: boolean }> {
    const { gitea, provider } = await this.gitea(input.giteaId, organizationId, em, caller);
    if (provider.gitProviderId !== input.gitProviderId) throw notFound('Git provider');
    await this.#reachable({ giteaUrl: input.giteaUrl, giteaInternalUrl: input.giteaInternalUrl }, organizationId);
    provider.name = input.name;
    this.#setGitea(gitea, input);
    await em.flush();
    return { success: true };
  }

  async giteaUrl(giteaId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<string> {
    return (await this.gitea(giteaId, organizationId, em, caller)).gitea.giteaUrl;
  }

  // ------------------------------------------------------------ push webhooks
  /** The connection and repository a workload's fields name for a provider type (null when incomplete). */
  repositoryOf(type: string, fields: Record<string, unknown>): { connectionId: string; repo: GitRepositoryRef } | null {
    const names = this.sourceFields(type);
    if (!names) return null;
    const { connectionId, repo, missing } = repositoryParts(names, fields);
    return missing.length ? null : { connectionId, repo };
  }

  /** Registers a push webhook on a workload's repository through its connection (of the organization); answers the provider's id of it. */
  async registerWebhook(type: string, connectionId: string, organizationId: string, repo: GitRepositoryRef, hook: { url: string; secret: string }, em: EntityManager): Promise<string> {
    const account = await this.accountFor(type, connectionId, organizationId, em);
    return (await this.#call(() => this.provider(type).registerWebhook(account, repo, hook))).id;
  }

  /** Removes a webhook registerWebhook made (gone already is fine). */
  async removeWebhook(type: string, connectionId: string, organizationId: string, repo: GitRepositoryRef, hookId: string, em: EntityManager): Promise<void> {
    const account = await this.accountFor(type, connectionId, organizationId, em);
    await this.#call(() => this.provider(type).removeWebhook(account, repo, hookId));
  }

  /**
   * The GitHub connections (of any organization) a GitHub App delivery comes from: those of the
   * installation it names (the App's ping names none: those of the App), found by these ids before
   * any secret is opened, then those among them whose App webhook secret signs the body as
   * `signature` (X-Hub-Signature-256), compared in constant time. `matched` counts the connections
   * the ids found: with none, no secret was opened.
   */
  async githubSigners(raw: Buffer, signature: string, from: { installationId: string | null; appId: string | null }, em: EntityManager): Promise<{ matched: number; signers: string[] }> {
    const where = from.installationId ? { githubInstallationId: from.installationId } : from.appId ? { githubAppId: Number(from.appId) } : null;
    if (!where) return { matched: 0, signers: [] };
    const rows = await em.find(GithubRecord, { githubWebhookSecret: { $ne: null }, ...where });
    const sent = Buffer.from(signature);
    const signers = rows.filter(r => {
      const expected = Buffer.from(`sha256=${createHmac('sha256', this.#secrets().decrypt(r.githubWebhookSecret!)).update(raw).digest('hex')}`);
      return sent.length === expected.length && timingSafeEqual(sent, expected);
    });
    return { matched: rows.length, signers: signers.map(r => r.githubId) };
  }

  /**
   * The pull (merge) request `number` of the repository a workload's source fields name, as its
   * provider holds it (head repository, branch and commit, base branch, author, state), asked
   * through the workload's connection; null for a source type with no provider API (a plain git
   * URL). The provider's refusal or failure is thrown (its message names the step).
   */
  async pullRequestOf(type: string, fields: Record<string, unknown>, organizationId: string, number: number, em: EntityManager): Promise<GitPullRequest | null> {
    const names = this.sourceFields(type);
    if (!names) return null;
    const { connectionId, repo, missing } = repositoryParts(names, fields);
    if (missing.length) throw badRequest(`The ${type} source is not complete: set ${missing.join(', ')}`);
    const account = await this.accountFor(type, connectionId, organizationId, em);
    return this.provider(type).pullRequest(account, repo, number);
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

/** gitProvider.*, github.*, gitlab.*, bitbucket.* and gitea.* for one request: the service confined to the caller's organization and, for a member, to the connections they made or that are shared. */
export const callerGitProviders =
  (service: GitProviderService) =>
  ({ principal, em }: Cradle) => {
    const { organizationId, userId, role } = principal!;
    const caller: GitCaller = { userId, role };
    return {
      all: () => service.all(organizationId, caller, em),
      toggleShare: (gitProviderId: string, shared: boolean) => service.toggleShare(gitProviderId, shared, organizationId, userId, em),
      remove: (gitProviderId: string) => service.remove(gitProviderId, organizationId, em, caller),
      githubOne: (githubId: string) => service.githubOne(githubId, organizationId, em, caller),
      githubProviders: () => service.githubProviders(organizationId, em, caller),
      githubRepositories: (githubId: string) => service.githubRepositories(githubId, organizationId, em, caller),
      githubBranches: (input: { githubId?: string; owner: string; repo: string }) => service.githubBranches(input, organizationId, em, caller),
      githubTestConnection: (githubId: string) => service.githubTestConnection(githubId, organizationId, em, caller),
      githubUpdate: (input: GithubUpdateInput) => service.githubUpdate(input, organizationId, em, caller),
      gitlabCreate: (input: GitlabCreateInput) => service.createGitlab(input, organizationId, userId, em),
      gitlabOne: (gitlabId: string) => service.gitlabOne(gitlabId, organizationId, em, caller),
      gitlabProviders: () => service.gitlabProviders(organizationId, em, caller),
      gitlabRepositories: (gitlabId: string) => service.gitlabRepositories(gitlabId, organizationId, em, caller),
      gitlabBranches: (input: GitlabBranchesInput) => service.gitlabBranches(input, organizationId, em, caller),
      gitlabTestConnection: (input: { gitlabId?: string; groupName?: string }) => service.gitlabTestConnection(input, organizationId, em, caller),
      gitlabUpdate: (input: GitlabUpdateInput) => service.gitlabUpdate(input, organizationId, em, caller),
      giteaCreate: (input: GiteaCreateInput) => service.createGitea(input, organizationId, userId, em),
      giteaOne: (giteaId: string) => service.giteaOne(giteaId, organizationId, em, caller),
      giteaProviders: () => service.giteaProviders(organizationId, em, caller),
      giteaRepositories: (giteaId: string) => service.giteaRepositories(giteaId, organizationId, em, caller),
      giteaBranches: (input: GiteaBranchesInput) => service.giteaBranches(input, organizationId, em, caller),
      giteaTestConnection: (input: { giteaId?: string; organizationName?: string }) => service.giteaTestConnection(input, organizationId, em, caller),
      giteaUpdate: (input: GiteaUpdateInput) => service.giteaUpdate(input, organizationId, em, caller),
      giteaUrl: (giteaId: string) => service.giteaUrl(giteaId, organizationId, em, caller),
      bitbucketCreate: (input: BitbucketCreateInput) => service.createBitbucket(input, organizationId, userId, em),
      bitbucketOne: (bitbucketId: string) => service.bitbucketOne(bitbucketId, organizationId, em, caller),
      bitbucketProviders: () => service.bitbucketProviders(organizationId, em, caller),
      bitbucketRepositories: (bitbucketId: string) => service.bitbucketRepositories(bitbucketId, organizationId, em, caller),
      bitbucketBranches: (input: BitbucketBranchesInput) => service.bitbucketBranches(input, organizationId, em, caller),
      bitbucketTestConnection: (input: BitbucketTestInput) => service.bitbucketTestConnection(input, organizationId, em, caller),
      bitbucketUpdate: (input: BitbucketUpdateInput) => service.bitbucketUpdate(input, organizationId, em, caller),
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
