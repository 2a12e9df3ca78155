// gitea.*: the caller's Gitea connections — made with the OAuth application's fields, one, the
// configured ones, their repositories and branches, the connection test, the update, the URL.
import { badRequest, newId, notFound } from '@berth/core';
import { GitProviderRecord, GiteaRecord, type GiteaRow } from '../entities.ts';
import { providerView, giteaRowView, usable, webUrlOf, GITEA_SECRETS } from '../records.ts';
import type { GitProviderView, GiteaBranchesInput, GiteaCreateInput, GiteaUpdateInput, GiteaView } from '../schemas.ts';
import { ConnectionScope } from './scope.ts';

/** Request-scoped (asClass(...).scoped()): confined to the caller's organization and, for a member, to the connections they may use. */
export class GiteaConnections extends ConnectionScope {
  /** The peer's create: the OAuth application's fields (and tokens, when given); the owner is the caller. Answers as the peer: id, client id, URL. */
  async create(input: GiteaCreateInput): Promise<{ giteaId: string; clientId: string; giteaUrl: string }> {
    const { organizationId, userId, em } = this.scope;
    await this.git.reachable({ giteaUrl: input.giteaUrl, giteaInternalUrl: input.giteaInternalUrl }, organizationId);
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
    for (const k of GITEA_SECRETS) if (input[k] !== undefined) gitea[k] = input[k] ? this.cradle.secrets.encrypt(input[k]) : null;
    for (const k of ['expiresAt', 'lastAuthenticatedAt'] as const) if (input[k] !== undefined) gitea[k] = input[k];
  }

  async one(giteaId: string): Promise<GiteaView> {
    const { organizationId, em, caller } = this.scope;
    const { gitea, provider } = await this.git.gitea(giteaId, organizationId, em, caller);
    return { ...giteaRowView(gitea), gitProvider: providerView(provider) };
  }

  /** The Gitea connections whose OAuth application is set (client id and secret), as the peer. */
  async providers(): Promise<{ giteaId: string; gitProvider: GitProviderView }[]> {
    return (await this.usableOf<GiteaRow>('gitea', GiteaRecord)).flatMap(({ provider, record: g }) =>
      g.clientId && g.clientSecret ? [{ giteaId: g.giteaId, gitProvider: providerView(provider) }] : [],
    );
  }

  async repositories(giteaId: string) {
    const { organizationId, em, caller } = this.scope;
    const { gitea } = await this.git.gitea(giteaId, organizationId, em, caller);
    const account = await this.git.giteaAccount(gitea, em);
    const repos = await this.git.call(() => this.git.provider('gitea').listRepositories(account));
    return repos.map(r => ({ id: Number(r.id), name: r.name, url: `${r.owner}/${r.name}`, owner: { username: r.owner } }));
  }

  /** Every branch of owner/repositoryName; giteaId is required, as the peer (400 naming it). */
  async branches(input: GiteaBranchesInput) {
    const { organizationId, em, caller } = this.scope;
    if (!input.giteaId) throw badRequest('giteaId: the Gitea provider is required');
    const { gitea } = await this.git.gitea(input.giteaId, organizationId, em, caller);
    const account = await this.git.giteaAccount(gitea, em);
    const branches = await this.git.call(() => this.git.provider('gitea').listBranches(account, { owner: input.owner, name: input.repositoryName }));
    return branches.map(b => ({ id: b.name, name: b.name, commit: { id: b.commit } }));
  }

  /** The same two steps as the others; success stamps lastAuthenticatedAt, as the peer. No giteaId: NOT_FOUND. */
  async testConnection(input: { giteaId?: string; organizationName?: string }): Promise<string> {
    const { organizationId, em, caller } = this.scope;
    if (!input.giteaId) throw notFound('Gitea Provider');
    const { gitea } = await this.git.gitea(input.giteaId, organizationId, em, caller);
    const answer = await this.git.testConnection('gitea', await this.git.giteaAccount(gitea, em, input.organizationName || undefined));
    gitea.lastAuthenticatedAt = Math.floor(Date.now() / 1000);
    await em.flush();
    return answer;
  }

  async update(input: GiteaUpdateInput): Promise<{ success: boolean }> {
    const { organizationId, em, caller } = this.scope;
    const { gitea, provider } = await this.git.gitea(input.giteaId, organizationId, em, caller);
    if (provider.gitProviderId !== input.gitProviderId) throw notFound('Git provider');
    await this.git.reachable({ giteaUrl: input.giteaUrl, giteaInternalUrl: input.giteaInternalUrl }, organizationId);
    provider.name = input.name;
    this.#setGitea(gitea, input);
    await em.flush();
    return { success: true };
  }

  async url(giteaId: string): Promise<string> {
    const { organizationId, em, caller } = this.scope;
    return (await this.git.gitea(giteaId, organizationId, em, caller)).gitea.giteaUrl;
  }
}
