// The organization's connected git accounts as the rest of Berth uses them: the rule for changing
// a workload's git source, what a workload's source fields name (its repository, another one of
// the same service for a fork), its webhooks, its pull requests (read, commented, their authors'
// access), an app's delivery signers (a forge's app: GitHub's), and the setup flows' steps (an OAuth code exchanged,
// an app's connection stored, its installation recorded). The records and accounts underneath are in
// accounts.ts; the procedures' side, request by request, in connections/.
import { badRequest, forbidden, GitProviderError, newId, type DeliveryHeaders, type EntityManager, type GitAccount, type GitProvider, type GitPullRequest, type GitRepositoryRef } from '@berth/core';
import { GitConnectionLookup } from './accounts.ts';
import { connectionRecord, repositoryParts, usable, type GitCaller } from './records.ts';

export class GitProviderService extends GitConnectionLookup {
  #keys: Set<string> | undefined;
  #fields: Set<string> | undefined;

  /** Each enabled forge's source fields that say where the source comes from (connection, owner, repository, branch, path, slug). */
  #whereFields(): string[] {
    return this.providers()
      .all('git')
      .flatMap(({ sourceFields: f }) => (f ? [f.id, f.owner, f.repository, f.branch, ...(f.path ? [f.path] : []), ...(f.slug ? [f.slug] : [])] : []));
  }

  /** Every enabled forge's source fields, build paths too (githubId, owner, gitlabBranch, a forge's own…): what a workload keeps of its git source. */
  sourceFieldNames(): Set<string> {
    this.#fields ??= new Set([
      ...this.#whereFields(),
      ...this.providers()
        .all('git')
        .flatMap(({ sourceFields: f }) => (f ? [f.buildPath] : [])),
    ]);
    return this.#fields;
  }

  /** The workload fields that make its git source (every enabled forge's), whose change the rule of `assertMayChangeSource` guards. */
  #sourceKeys(): Set<string> {
    this.#keys ??= new Set([
      'sourceType',
      ...this.#whereFields(),
      ...this.providers()
        .all('git')
        .flatMap(({ sourceFields: f }) => f?.identity ?? []),
    ]);
    return this.#keys;
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
    for (const field of this.connectionFields().keys()) {
      const id = current[field];
      if (typeof id !== 'string' || !id) continue;
      const row = await this.connection(field, id, organizationId, em).catch(() => null); // a connection since removed binds nobody
      if (row && !usable(row, caller))
        throw forbidden(
          `${field}: this workload deploys from another member's git provider connection, not shared with the organization: only an owner or admin, or that member, may change its source`,
        );
    }
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
    return (await this.call(() => this.provider(type).registerWebhook(account, repo, hook))).id;
  }

  /** Removes a webhook registerWebhook made (gone already is fine). */
  async removeWebhook(type: string, connectionId: string, organizationId: string, repo: GitRepositoryRef, hookId: string, em: EntityManager): Promise<void> {
    const account = await this.accountFor(type, connectionId, organizationId, em);
    await this.call(() => this.provider(type).removeWebhook(account, repo, hookId));
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

  /**
   * The connections (of any organization) of a forge's app a delivery comes from: those of the
   * installation it names (the app's ping names none: those of the app), found by these ids before
   * any secret is opened, then those among them whose webhook secret signs the delivery by the
   * forge's own scheme (its reader's verify, in constant time). `matched` counts the connections the
   * ids found: with none, no secret was opened. Answers the connections' ids (the workload field
   * that names them: the forge's sourceFields.id).
   */
  async appSigners(
    type: string,
    raw: Buffer,
    headers: DeliveryHeaders,
    from: { installationId: string | null; appId: string | null },
    em: EntityManager,
  ): Promise<{ matched: number; signers: string[] }> {
    const reader = this.provider(type).deliveries;
    if (!reader?.app || (!from.installationId && !from.appId)) return { matched: 0, signers: [] };
    const candidates = await this.#forgeApps(type, from, em);
    const signers = candidates.filter(c => reader.verify(headers, raw, this.secrets().decrypt(c.secret))?.ok === true);
    return { matched: candidates.length, signers: signers.map(c => c.id) };
  }

  /** A forge's app connections kept in the generic record: the settings its form names hold the installation (else the app) id, the secret it names the webhook secret. */
  async #forgeApps(type: string, from: { installationId: string | null; appId: string | null }, em: EntityManager): Promise<{ id: string; secret: string }[]> {
    const keys = this.provider(type).connection?.app;
    const [key, value] = from.installationId ? [keys?.installation, from.installationId] : [keys?.app, from.appId];
    if (!keys || !key || !value) return [];
    const rows = await em
      .getConnection()
      .execute<{ connection_id: string; secret: string }[]>(
        `select c.connection_id, c.secrets->>? as secret from git_connections c join git_providers p on p.git_provider_id = c.git_provider_id where p.provider_type = ? and c.settings->>? = ? and c.secrets->>? is not null`,
        [keys.secret, type, key, value, keys.secret],
      );
    return rows.map(r => ({ id: r.connection_id, secret: r.secret }));
  }

  /** An OAuth flow's return: the code exchanged through the forge's provider for the connection's first token pair, stored (sealed). */
  async authorize(type: string, connectionId: string, code: string, redirectUri: (settings: GitAccount['settings']) => string, organizationId: string, em: EntityManager): Promise<void> {
    const provider = this.provider(type);
    if (!provider.exchangeCode) throw badRequest(`The enabled ${provider.label} provider cannot complete an OAuth authorization`);
    const { record } = await this.forge(type, connectionId, organizationId, em);
    const account = this.forgeAccount(record);
    const got = await provider.exchangeCode(account, code, redirectUri(account.settings));
    this.storeForgeAccount(record, { settings: { ...account.settings, ...got.settings }, secrets: { ...account.secrets, ...got.secrets } });
    await em.flush();
  }

  /**
   * A connection a forge's setup flow made (or a test's fixture): its name and fields (settings and
   * secrets by the forge's form), stored as given, the owner `userId`; answers it as `<forge>.one`
   * does, without the git provider row.
   */
  async createConnection(
    type: string,
    fields: Record<string, unknown> & { name: string },
    organizationId: string,
    userId: string,
    em: EntityManager,
  ): Promise<Record<string, unknown> & { connectionId: string }> {
    const account = this.formFields(type, fields, this.provider(type).connection?.wire?.defaults);
    await this.reachableSettings(account.settings, organizationId);
    const { record } = await this.newConnection(type, fields.name, account, { settings: {}, secrets: {} }, organizationId, userId, em);
    return { connectionId: record.connectionId, ...connectionRecord(this.provider(type), record) };
  }

  /** An app flow's second step: the app was installed; its installation id completes the connection (of the organization, and one the caller may use: theirs or shared with them). */
  async setInstallation(type: string, connectionId: string, installationId: string, organizationId: string, em: EntityManager, caller: GitCaller): Promise<void> {
    const setting = this.provider(type).connection?.app?.installation;
    if (!setting) throw badRequest(`The ${this.provider(type).label} provider has no app installation`);
    const { record } = await this.forge(type, connectionId, organizationId, em, caller);
    record.settings = { ...record.settings, [setting]: installationId };
    await em.flush();
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The git provider records and the calls through their providers. */
    gitProviders: GitProviderService;
  }
}
