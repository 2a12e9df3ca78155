// <forge>.*: the caller's connections of a forge that keeps them in the generic record (a provider
// declaring `connection`): made from the fields its GitConnectionForm names (checked against the
// service through the provider's connect first, unless its wire says the peer's create does not),
// one, the organization's, their repositories and branches, the connection test, the update.
// Settings are kept in clear and answered; secrets sealed, never answered (null where the forge
// answers every field of a record, as the peer's tables do).
import { badRequest, notFound, type GitAccount, type GitProvider } from '@berth/core';
import type { GitConnectionRow, GitProviderRow } from '../entities.ts';
import { connectionRecord, providerView } from '../records.ts';
import type { GitProviderView } from '../schemas.ts';
import { ConnectionScope } from './scope.ts';

/** A connection as `<forge>.one` answers it: its id under the forge's field (forgeId), its provider row, its settings. */
export type ForgeConnectionView = Record<string, unknown> & { gitProviderId: string; gitProvider: GitProviderView };

/** What create and update take: the connection's name, then the form's settings and secrets by name. */
type ForgeInput = Record<string, unknown> & { name?: string; gitProviderId?: unknown };

/** Request-scoped (asClass(...).scoped()): confined to the caller's organization and, for a member, to the connections they may use. */
export class ForgeConnections extends ConnectionScope {
  #form(type: string) {
    const provider = this.git.provider(type);
    if (!provider.connection) throw badRequest(`The ${provider.label} provider declares no connection form`);
    return { provider, form: provider.connection };
  }

  #view(type: string, record: GitConnectionRow, row: GitProviderRow): ForgeConnectionView {
    return { ...connectionRecord(this.#form(type).provider, record), gitProviderId: record.gitProviderId, gitProvider: providerView(row) };
  }

  /** Checks the fields against the service (the provider's connect) before anything is stored; the owner is the caller. */
  async create(type: string, input: ForgeInput): Promise<ForgeConnectionView> {
    const { organizationId, userId, em } = this.scope;
    const { provider, form } = this.#form(type);
    const account = this.git.formFields(type, input, form.wire?.defaults);
    await this.git.reachableSettings(account.settings, organizationId);
    const learned = form.wire?.create?.checked === false ? { settings: {}, secrets: {} } : await this.git.call(() => provider.connect(account));
    const { record, row } = await this.git.newConnection(type, String(input.name), account, learned, organizationId, userId, em);
    return this.#view(type, record, row);
  }

  async one(type: string, connectionId: string): Promise<ForgeConnectionView> {
    const { organizationId, em, caller } = this.scope;
    const { record, provider } = await this.git.forge(type, connectionId, organizationId, em, caller);
    return this.#view(type, record, provider);
  }

  /** The organization's connections of the forge the caller may use, newest first; with `when`, only those whose settings or secrets of these names are set. */
  async all(type: string, when: readonly string[] = []): Promise<ForgeConnectionView[]> {
    const set = (record: GitConnectionRow) => when.every(k => (record.settings[k] ?? record.secrets[k] ?? null) !== null);
    return (await this.usableOf(type)).flatMap(({ provider, record }) => (set(record) ? [this.#view(type, record, provider)] : []));
  }

  async repositories(type: string, connectionId: string) {
    const account = await this.#account(type, connectionId);
    return this.git.call(() => this.git.provider(type).listRepositories(account));
  }

  /** Every branch of a repository, named by owner and name or by its id among those the connection lists (NOT_FOUND when it lists none such); null names none: no branches. */
  async branches(type: string, connectionId: string, named: (account: GitAccount) => { owner: string; name: string } | { id: string } | null) {
    const account = await this.#account(type, connectionId);
    const provider = this.git.provider(type);
    const ref = named(account);
    if (!ref) return [];
    let repo = ref as { owner: string; name: string };
    if ('id' in ref) {
      const listed = (await this.git.call(() => provider.listRepositories(account))).find(r => r.id === ref.id);
      if (!listed) throw notFound(`${provider.label} repository`);
      repo = { owner: listed.owner, name: listed.name };
    }
    return this.git.call(() => provider.listBranches(account, repo));
  }

  /** The path a deploy takes, both halves: the API lists the repositories, then `git ls-remote` runs with a fresh clone credential on the first one. */
  async testConnection(type: string, connectionId: string, adjust: (stored: GitAccount) => GitAccount = a => a): Promise<string> {
    const answer = await this.git.testConnection(type, adjust(await this.#account(type, connectionId)));
    const stamp = this.#form(type).form.wire?.testConnection?.stamp;
    if (stamp) {
      const { organizationId, em, caller } = this.scope;
      const { record } = await this.git.forge(type, connectionId, organizationId, em, caller);
      record.settings = { ...record.settings, [stamp]: Math.floor(Date.now() / 1000) };
      await em.flush();
    }
    return answer;
  }

  /** One setting of a connection the caller may use (null when unset). */
  async setting(type: string, connectionId: string, setting: string): Promise<unknown> {
    const { organizationId, em, caller } = this.scope;
    const { record } = await this.git.forge(type, connectionId, organizationId, em, caller);
    return record.settings[setting] ?? this.#form(type).form.wire?.defaults?.[setting] ?? null;
  }

  /**
   * Renames it and changes the fields given (absent ones kept; a field given as null or "" is
   * removed), checked against the service again unless the forge's wire says otherwise. A
   * gitProviderId given must be the connection's.
   */
  async update(type: string, connectionId: string, input: ForgeInput): Promise<ForgeConnectionView> {
    const { organizationId, em, caller } = this.scope;
    const { form } = this.#form(type);
    const { record, provider: row } = await this.git.forge(type, connectionId, organizationId, em, caller);
    if (input.gitProviderId !== undefined && input.gitProviderId !== row.gitProviderId) throw notFound('Git provider');
    const current = this.git.forgeAccount(record);
    const given = this.git.formFields(type, input);
    await this.git.reachableSettings(given.settings, organizationId);
    const account = { settings: { ...current.settings, ...given.settings }, secrets: { ...current.secrets, ...given.secrets } };
    const learned = form.wire?.update?.checked === false ? { settings: {}, secrets: {} } : await this.git.call(() => this.git.provider(type).connect(account));
    this.git.storeForgeAccount(record, { settings: { ...account.settings, ...learned.settings }, secrets: { ...account.secrets, ...learned.secrets } });
    if (input.name !== undefined) row.name = input.name;
    await em.flush();
    return this.#view(type, record, row);
  }

  /** The account of a connection the caller may use, its credentials renewed (and stored) first when the provider says they expire soon. */
  async #account(type: string, connectionId: string): Promise<GitAccount> {
    const { organizationId, em, caller } = this.scope;
    const { record } = await this.git.forge(type, connectionId, organizationId, em, caller);
    return this.git.forgeAccountRenewed(type, record, em);
  }
}
