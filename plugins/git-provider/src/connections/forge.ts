// <forge>.*: the caller's connections of a forge that brings no record of its own (a provider
// declaring `connection`, one written out of tree): made from the fields its GitConnectionForm
// names (checked against the service through the provider's connect first), one, the
// organization's, their repositories and branches, the connection test, the update. Settings are
// kept in clear and answered; secrets sealed, never answered.
import { badRequest, newId, type GitAccount, type GitProvider } from '@berth/core';
import { GitConnectionRecord, GitProviderRecord, type GitConnectionRow, type GitProviderRow } from '../entities.ts';
import { providerView } from '../records.ts';
import type { GitProviderView } from '../schemas.ts';
import { ConnectionScope } from './scope.ts';

/** A connection as `<forge>.one` answers it: its id under the forge's field (forgeId), its provider row, its settings. */
export type ForgeConnectionView = Record<string, unknown> & { gitProviderId: string; gitProvider: GitProviderView };

/** What create and update take: the connection's name, then the form's settings and secrets by name. */
type ForgeInput = Record<string, unknown> & { name?: string };

/** Request-scoped (asClass(...).scoped()): confined to the caller's organization and, for a member, to the connections they may use. */
export class ForgeConnections extends ConnectionScope {
  /** The input field that names a connection of the forge: its sourceFields.id, else `<forge>Id`. */
  static idField(provider: GitProvider): string {
    return provider.sourceFields?.id ?? `${provider.id}Id`;
  }

  #form(type: string) {
    const provider = this.git.provider(type);
    if (!provider.connection) throw badRequest(`The ${provider.label} provider keeps its connections in records of its own`);
    return { provider, form: provider.connection, idField: ForgeConnections.idField(provider) };
  }

  #view(type: string, record: GitConnectionRow, row: GitProviderRow): ForgeConnectionView {
    const { idField } = this.#form(type);
    return { [idField]: record.connectionId, gitProviderId: record.gitProviderId, ...record.settings, gitProvider: providerView(row) };
  }

  /** The settings and secrets `input` gives, split by the form (secrets in clear here; sealed on store). */
  #split(type: string, input: ForgeInput): { settings: GitAccount['settings']; secrets: GitAccount['secrets'] } {
    const { form } = this.#form(type);
    // The form's schemas validated the input: settings are strings, numbers or null, secrets strings.
    const pick = <V>(keys: string[]) => Object.fromEntries(keys.filter(k => input[k] !== undefined).map(k => [k, (input[k] ?? null) as V]));
    return { settings: pick<string | number | null>(Object.keys(form.settings.properties)), secrets: pick<string | null>(Object.keys(form.secrets.properties)) };
  }

  /** Each http(s) address among the settings must be one the organization may reach (outboundAllow; a 400 naming the field). */
  async #reachable(settings: GitAccount['settings']): Promise<void> {
    const urls = Object.fromEntries(Object.entries(settings).filter((e): e is [string, string] => typeof e[1] === 'string' && /^https?:\/\//i.test(e[1])));
    await this.git.reachable(urls, this.scope.organizationId);
  }

  /** Checks the fields against the service (the provider's connect) before anything is stored; the owner is the caller. */
  async create(type: string, input: ForgeInput): Promise<ForgeConnectionView> {
    const { organizationId, userId, em } = this.scope;
    const { provider } = this.#form(type);
    const account = this.#split(type, input);
    await this.#reachable(account.settings);
    const learned = await this.git.call(() => provider.connect(account));
    const row = em.create(GitProviderRecord, { gitProviderId: newId(), name: String(input.name), providerType: type, organizationId, userId, sharedWithOrganization: false, createdAt: new Date() });
    const record = em.create(GitConnectionRecord, { connectionId: newId(), gitProviderId: row.gitProviderId, settings: {}, secrets: {} });
    this.git.storeForgeAccount(record, { settings: { ...account.settings, ...learned.settings }, secrets: { ...account.secrets, ...learned.secrets } });
    await em.flush();
    return this.#view(type, record, row);
  }

  async one(type: string, connectionId: string): Promise<ForgeConnectionView> {
    const { organizationId, em, caller } = this.scope;
    const { record, provider } = await this.git.forge(type, connectionId, organizationId, em, caller);
    return this.#view(type, record, provider);
  }

  /** The organization's connections of the forge the caller may use, newest first. */
  async all(type: string): Promise<ForgeConnectionView[]> {
    return (await this.usableOf<GitConnectionRow>(type, GitConnectionRecord)).map(({ provider, record }) => this.#view(type, record, provider));
  }

  async repositories(type: string, connectionId: string) {
    const account = await this.#account(type, connectionId);
    return this.git.call(() => this.git.provider(type).listRepositories(account));
  }

  async branches(type: string, connectionId: string, repo: { owner: string; name: string }) {
    const account = await this.#account(type, connectionId);
    return this.git.call(() => this.git.provider(type).listBranches(account, repo));
  }

  /** The path a deploy takes, both halves: the API lists the repositories, then `git ls-remote` runs with a fresh clone credential on the first one. */
  async testConnection(type: string, connectionId: string): Promise<string> {
    return this.git.testConnection(type, await this.#account(type, connectionId));
  }

  /** Renames it and changes the fields given (absent ones kept; a secret given as null or "" is removed), checked against the service again. */
  async update(type: string, connectionId: string, input: ForgeInput): Promise<ForgeConnectionView> {
    const { organizationId, em, caller } = this.scope;
    const { record, provider: row } = await this.git.forge(type, connectionId, organizationId, em, caller);
    const current = this.git.forgeAccount(record);
    const given = this.#split(type, input);
    await this.#reachable(given.settings);
    const account = { settings: { ...current.settings, ...given.settings }, secrets: { ...current.secrets, ...given.secrets } };
    const learned = await this.git.call(() => this.git.provider(type).connect(account));
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
