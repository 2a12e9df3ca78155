// The connections as Berth itself uses them, whoever asks: a record found by id within its
// organization (and, for a member, only one they may use), the account its provider is called
// with (secrets opened, an OAuth token renewed first when it expires soon), the connection a
// workload names joined into its answer, the two-step connection test, and a provider's failure
// turned into a 400 naming its step. GitProviderService (service.ts) builds on it.
import {
  badRequest,
  GitProviderError,
  schema,
  newId,
  notFound,
  type EntityManager,
  type GitAccount,
  type GitProvider,
  type GitSourceFields,
  type OutboundGuard,
  type ProviderRegistry,
  type SecretBox,
  type SourceProvider,
  type TSchema,
} from '@berth/core';
import { GitConnectionRecord, GitProviderRecord, type GitConnectionRow, type GitProviderRow } from './entities.ts';
import { connectionRelation, connectionRelationSchema, forgeIdField, notShared, usable, webUrlOf, type GitCaller } from './records.ts';

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

  /** The workload field that names a connection (its forge's `sourceFields.id`: githubId, gitlabId…), per forge type: every enabled forge's that is a source. */
  connectionFields(): Map<string, string> {
    return new Map(
      this.providers()
        .all('git')
        .flatMap(p => (p.sourceFields ? [[p.sourceFields.id, p.id] as const] : [])),
    );
  }

  /**
   * Checks that a workload's connection field (githubId, gitlabId, a forge's own) names a connection
   * of the organization (NOT_FOUND otherwise) that the caller may use (FORBIDDEN naming the field otherwise).
   */
  async connection(field: string, id: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<GitProviderRow> {
    const type = this.connectionFields().get(field);
    if (!type) throw badRequest(`${field}: no enabled git provider names its connections so`);
    const { provider } = await this.forge(type, id, organizationId, em);
    if (!usable(provider, caller)) throw notShared(field);
    return provider;
  }

  /** A connection kept in the generic record (git_connections), and its provider row of that type, within the organization. */
  async forge(type: string, connectionId: string, organizationId: string, em: EntityManager, caller?: GitCaller): Promise<{ record: GitConnectionRow; provider: GitProviderRow }> {
    const what = `${this.provider(type).label} Provider`;
    const { record, provider } = await this.#typed(em.findOne(GitConnectionRecord, { connectionId }), what, organizationId, em, caller);
    if (provider.providerType !== type) throw notFound(what);
    return { record, provider };
  }

  /** The enabled forges a workload deploys from that keep connections (sourceFields and a connection form). */
  #sourceForges(): GitProvider[] {
    return this.providers()
      .all('git')
      .filter(p => p.sourceFields && p.connection);
  }

  /**
   * The connections a workload's fields name, under each enabled forge's id (the peer's github,
   * gitlab, bitbucket, gitea; a forge's own), as the workload's `one` joins them: the record
   * without its secrets (and what the forge's wire leaves out); null where the field names none
   * of the organization's.
   */
  async relations(fields: Record<string, unknown>, organizationId: string, em: EntityManager): Promise<Record<string, Record<string, unknown> | null>> {
    const out: Record<string, Record<string, unknown> | null> = {};
    for (const provider of this.#sourceForges()) {
      const id = fields[forgeIdField(provider)];
      const found = typeof id === 'string' && id ? await this.forge(provider.id, id, organizationId, em).catch(() => null) : null;
      out[provider.id] = found ? connectionRelation(provider, found.record) : null;
    }
    return out;
  }

  /** The schemas of relations(): per forge, its joined record or null. */
  relationSchemas(): Record<string, TSchema> {
    return Object.fromEntries(this.#sourceForges().map(p => [p.id, schema.Nullable(connectionRelationSchema(p))]));
  }

  /** The account a forge's generic record gives it: its settings, its secrets opened. */
  forgeAccount(record: GitConnectionRow): GitAccount {
    const open = (v: string | null | undefined) => (v ? this.secrets().decrypt(v) : null);
    return { settings: { ...record.settings }, secrets: Object.fromEntries(Object.entries(record.secrets).map(([k, v]) => [k, open(v)])) };
  }

  /**
   * The settings and secrets `fields` gives a forge's connection, split by its form (secrets in
   * clear here; sealed on store), `defaults` under them. An empty field is an unset one (the peer
   * keeps `value || null`); a server's address is kept as its origin and path (a 400 naming the
   * field when it is none). The form's schemas validated the fields: settings are strings, numbers
   * or null, secrets strings.
   */
  formFields(type: string, fields: Record<string, unknown>, defaults: Readonly<Record<string, string>> = {}): GitAccount {
    const form = this.provider(type).connection;
    if (!form) throw badRequest(`The ${this.provider(type).label} provider declares no connection form`);
    const pick = <V>(keys: string[]) => Object.fromEntries(keys.filter(k => fields[k] !== undefined).map(k => [k, (fields[k] === '' ? null : (fields[k] ?? null)) as V]));
    const settings = { ...defaults, ...pick<string | number | null>(Object.keys(form.settings.properties)) };
    for (const k of form.wire?.webUrls ?? []) if (typeof settings[k] === 'string') settings[k] = webUrlOf(settings[k], k);
    return { settings, secrets: pick<string | null>(Object.keys(form.secrets.properties)) };
  }

  /** Each http(s) address among a connection's settings must be one the organization may reach (outboundAllow; a 400 naming the field). */
  async reachableSettings(settings: GitAccount['settings'], organizationId: string): Promise<void> {
    await this.reachable(Object.fromEntries(Object.entries(settings).filter((e): e is [string, string] => typeof e[1] === 'string' && /^https?:\/\//i.test(e[1]))), organizationId);
  }

  /** A new connection of the organization, its owner `userId`: the shared row and the forge's record, the account (and what the service taught: `learned`) stored, secrets sealed. */
  async newConnection(type: string, name: string, account: GitAccount, learned: GitAccount, organizationId: string, userId: string, em: EntityManager) {
    const row = em.create(GitProviderRecord, { gitProviderId: newId(), name, providerType: type, organizationId, userId, sharedWithOrganization: false, createdAt: new Date() });
    const record = em.create(GitConnectionRecord, { connectionId: newId(), gitProviderId: row.gitProviderId, settings: {}, secrets: {} });
    this.storeForgeAccount(record, { settings: { ...account.settings, ...learned.settings }, secrets: { ...account.secrets, ...learned.secrets } });
    await em.flush();
    return { record, row };
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
    return this.forgeAccountRenewed(type, (await this.forge(type, id, organizationId, em)).record, em);
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
