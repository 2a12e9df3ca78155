// The connections as Berth itself uses them, whoever asks: a record found by id within its
// organization (and, for a member, only one they may use), the account its provider is called
// with (secrets opened, an OAuth token renewed first when it expires soon), the connection a
// workload names joined into its answer, the two-step connection test, and a provider's failure
// turned into a 400 naming its step. GitProviderService (service.ts) builds on it.
import {
  badRequest,
  GitProviderError,
  notFound,
  type EntityManager,
  type GitAccount,
  type GitProvider,
  type GitSourceFields,
  type OutboundGuard,
  type ProviderRegistry,
  type SecretBox,
  type SourceProvider,
} from '@berth/core';
import {
  BitbucketRecord,
  GitConnectionRecord,
  GiteaRecord,
  GitProviderRecord,
  GithubRecord,
  GitlabRecord,
  type BitbucketRow,
  type GitConnectionRow,
  type GiteaRow,
  type GitProviderRow,
  type GithubRow,
  type GitlabRow,
} from './entities.ts';
import {
  BITBUCKET_SECRETS,
  bitbucketRowView,
  CONNECTION_FIELDS,
  GITEA_SECRETS,
  giteaRowView,
  GITHUB_SECRETS,
  githubRowView,
  GITLAB_SECRETS,
  gitlabRowView,
  notShared,
  usable,
  type GitCaller,
  type OAuthRow,
} from './records.ts';

/** A token is renewed when it expires within this margin (a deploy's clone must not outlive it). */
const REFRESH_MARGIN_MS = 10 * 60_000;

export class GitConnectionLookup {
  protected readonly secrets: () => SecretBox;
  protected readonly providers: () => ProviderRegistry;
  protected readonly source: () => SourceProvider | null;
  readonly #outbound: () => OutboundGuard | null;

  constructor(deps: { secrets: () => SecretBox; providers: () => ProviderRegistry; gitFetcher: () => SourceProvider | null; outbound?: () => OutboundGuard | null }) {
    this.#outbound = deps.outbound ?? (() => null);
    this.secrets = deps.secrets;
    this.providers = deps.providers;
    this.source = deps.gitFetcher;
  }

  /** Each URL given must be one the organization may reach (outboundAllow; a 400 naming the field). */
  async reachable(urls: Record<string, string | null | undefined>, organizationId: string): Promise<void> {
    const guard = this.#outbound();
    if (!guard) return;
    for (const [field, url] of Object.entries(urls)) if (url) await guard.checkSaved(url, { field, organizationId });
  }

  /** The workload fields that name what to clone from an enabled forge; undefined for a source type no forge serves (a plain git URL, an image). */
  sourceFields(type: string): GitSourceFields | undefined {
    return this.providers().has('git', type) ? this.providers().get('git', type).sourceFields : undefined;
  }

  provider(type: string): GitProvider {
    if (!this.providers().has('git', type)) throw badRequest(`No git provider "${type}" is enabled on this instance (providers.git.${type})`);
    return this.providers().get('git', type);
  }

  async providerRow(gitProviderId: string, organizationId: string, em: EntityManager): Promise<GitProviderRow> {
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

  /** The workload field that names a connection (its forge's `sourceFields.id`: githubId, gitlabId…), per forge type: the four built-in forges' (checked even while disabled) and every enabled forge's that is a source. */
  connectionFields(): Map<string, string> {
    return new Map([
      ...Object.entries(CONNECTION_FIELDS),
      ...this.providers()
        .all('git')
        .flatMap(p => (p.sourceFields ? [[p.sourceFields.id, p.id] as const] : [])),
    ]);
  }

  /**
   * Checks that a workload's connection field (githubId, gitlabId, a forge's own) names a connection
   * of the organization (NOT_FOUND otherwise) that the caller may use (FORBIDDEN naming the field otherwise).
   */
  async connection(field: string, id: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<GitProviderRow> {
    const type = this.connectionFields().get(field);
    if (!type) throw badRequest(`${field}: no enabled git provider names its connections so`);
    const { provider } = await this.#anyOf(type, id, organizationId, em);
    if (!usable(provider, caller)) throw notShared(field);
    return provider;
  }

  /** A connection of any forge by the id a workload holds, with its provider row (of the organization; NOT_FOUND otherwise). */
  async #anyOf(type: string, id: string, organizationId: string, em: EntityManager): Promise<{ provider: GitProviderRow }> {
    if (type === 'github') return this.github(id, organizationId, em);
    if (type === 'gitlab') return this.gitlab(id, organizationId, em);
    if (type === 'bitbucket') return this.bitbucket(id, organizationId, em);
    if (type === 'gitea') return this.gitea(id, organizationId, em);
    return this.forge(type, id, organizationId, em);
  }

  /** A connection of a forge without a record of its own (git_connections), and its provider row of that type, within the organization. */
  async forge(type: string, connectionId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<{ record: GitConnectionRow; provider: GitProviderRow }> {
    const { record, provider } = await this.#typed(em.findOne(GitConnectionRecord, { connectionId }), `${this.provider(type).label} connection`, organizationId, em, caller);
    if (provider.providerType !== type) throw notFound(`${this.provider(type).label} connection`);
    return { record, provider };
  }

  /** The account a forge's generic record gives it: its settings, its secrets opened. */
  forgeAccount(record: GitConnectionRow): GitAccount {
    const open = (v: string | null | undefined) => (v ? this.secrets().decrypt(v) : null);
    return { settings: { ...record.settings }, secrets: Object.fromEntries(Object.entries(record.secrets).map(([k, v]) => [k, open(v)])) };
  }

  /** Keeps an account in a forge's generic record: settings in clear, each secret sealed. */
  storeForgeAccount(record: GitConnectionRow, account: GitAccount): void {
    record.settings = { ...account.settings };
    record.secrets = Object.fromEntries(Object.entries(account.secrets).map(([k, v]) => [k, v ? this.secrets().encrypt(v) : null]));
  }

  /** A forge's generic account, its credentials renewed through the provider (and the record updated) when they expire within the margin. */
  async forgeAccountRenewed(type: string, record: GitConnectionRow, em: EntityManager): Promise<GitAccount> {
    const account = this.forgeAccount(record);
    const renewed = await this.call(() => this.provider(type).refresh(account, REFRESH_MARGIN_MS));
    if (!renewed) return account;
    const next = { settings: { ...account.settings, ...renewed.settings }, secrets: { ...account.secrets, ...renewed.secrets } };
    this.storeForgeAccount(record, next);
    await em.flush();
    return next;
  }

  /** The account a workload's connection gives its provider (a GitLab token renewed first when it expires soon). */
  async accountFor(type: string, id: string, organizationId: string, em: EntityManager): Promise<GitAccount> {
    if (type === 'gitlab') return this.gitlabAccount((await this.gitlab(id, organizationId, em)).gitlab, em);
    if (type === 'bitbucket') return this.bitbucketAccount((await this.bitbucket(id, organizationId, em)).bitbucket);
    if (type === 'gitea') return this.giteaAccount((await this.gitea(id, organizationId, em)).gitea, em);
    if (type === 'github') return this.githubAccount((await this.github(id, organizationId, em)).github);
    return this.forgeAccountRenewed(type, (await this.forge(type, id, organizationId, em)).record, em);
  }

  /** An account: `settings` as given, the record's sealed `keys` opened. */
  #account<K extends string>(settings: GitAccount['settings'], keys: readonly K[], row: Partial<Record<K, string | null>>): GitAccount {
    const open = (v: string | null | undefined) => (v ? this.secrets().decrypt(v) : null);
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
    const renewed = await this.call(() => this.provider(type).refresh(account(), REFRESH_MARGIN_MS));
    if (renewed) {
      this.storeTokens(row, renewed);
      await em.flush();
    }
    return account();
  }

  protected storeTokens(g: OAuthRow, update: { settings: Record<string, unknown>; secrets: Record<string, string | null> }): void {
    if (update.secrets.accessToken) g.accessToken = this.secrets().encrypt(update.secrets.accessToken);
    if (update.secrets.refreshToken) g.refreshToken = this.secrets().encrypt(update.secrets.refreshToken);
    if ('expiresAt' in update.settings) g.expiresAt = typeof update.settings.expiresAt === 'number' ? update.settings.expiresAt : null;
  }

  /**
   * The path a deploy takes, both halves: the API lists the repositories, then `git ls-remote` runs
   * with a fresh clone credential on the first one. A failure names its step; success answers as the peer.
   */
  async testConnection(type: string, account: GitAccount): Promise<string> {
    const provider = this.provider(type);
    const repos = await this.call(() => provider.listRepositories(account));
    const first = repos[0];
    if (first) {
      const fetcher = this.source();
      if (fetcher?.remoteHeads) {
        const credential = await this.call(() => provider.cloneCredential(account, { owner: first.owner, name: first.name }));
        try {
          await fetcher.remoteHeads({ url: first.cloneUrl, credential, signal: AbortSignal.timeout(60_000) });
        } catch (e) {
          throw badRequest(`clone: git cannot read ${first.owner}/${first.name} with the provider's credential: ${(e as Error).message}`);
        }
      }
    }
    return `Found ${repos.length} repositories`;
  }

  /** A provider's failure as a 400 whose message starts with the failing step. */
  async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof GitProviderError) throw badRequest(`${e.failure}: ${e.message}`);
      throw e;
    }
  }
}
