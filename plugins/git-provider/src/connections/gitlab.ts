// gitlab.*: the caller's GitLab connections — made with the OAuth application's fields, one, the
// authorized ones, their projects and branches, the connection test, the update.
import { newId, notFound } from '@berth/core';
import { GitProviderRecord, GitlabRecord, type GitlabRow } from '../entities.ts';
import { providerView, gitlabRowView, usable, gitlabAuthorized, webUrlOf, GITLAB_SECRETS } from '../records.ts';
import type { GitProviderView, GitlabBranchesInput, GitlabCreateInput, GitlabUpdateInput, GitlabView } from '../schemas.ts';
import { ConnectionScope } from './scope.ts';

/** Request-scoped (asClass(...).scoped()): confined to the caller's organization and, for a member, to the connections they may use. */
export class GitlabConnections extends ConnectionScope {
  /** The peer's create: the OAuth application's fields (and, in the older variant, tokens); the owner is always the caller. */
  async create(input: GitlabCreateInput): Promise<GitlabView> {
    const { organizationId, userId, em } = this.scope;
    await this.git.reachable({ gitlabUrl: input.gitlabUrl, gitlabInternalUrl: input.gitlabInternalUrl }, organizationId);
    const seal = (v: string | null | undefined) => (v ? this.cradle.secrets.encrypt(v) : null);
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

  async one(gitlabId: string): Promise<GitlabView> {
    const { organizationId, em, caller } = this.scope;
    const { gitlab, provider } = await this.git.gitlab(gitlabId, organizationId, em, caller);
    return { ...gitlabRowView(gitlab), gitProvider: providerView(provider) };
  }

  /** The authorized GitLab connections (both tokens set), as the peer. */
  async providers(): Promise<{ gitlabId: string; gitlabUrl: string; gitProvider: GitProviderView }[]> {
    return (await this.usableOf<GitlabRow>('gitlab', GitlabRecord)).flatMap(({ provider, record: g }) =>
      gitlabAuthorized(g) ? [{ gitlabId: g.gitlabId, gitlabUrl: g.gitlabUrl, gitProvider: providerView(provider) }] : [],
    );
  }

  async repositories(gitlabId: string) {
    const { organizationId, em, caller } = this.scope;
    const { gitlab } = await this.git.gitlab(gitlabId, organizationId, em, caller);
    const account = await this.git.gitlabAccount(gitlab, em);
    const repos = await this.git.call(() => this.git.provider('gitlab').listRepositories(account));
    return repos.map(r => ({ id: Number(r.id), name: r.name, url: `${r.owner}/${r.name}`, owner: { username: r.owner.split('/').pop()! } }));
  }

  /** Every branch of the project `id` names (its path read from the listing); none without gitlabId or id, as the peer. */
  async branches(input: GitlabBranchesInput) {
    const { organizationId, em, caller } = this.scope;
    if (!input.gitlabId) return [];
    const { gitlab } = await this.git.gitlab(input.gitlabId, organizationId, em, caller);
    if (!input.id) return [];
    const provider = this.git.provider('gitlab');
    const account = await this.git.gitlabAccount(gitlab, em);
    const project = (await this.git.call(() => provider.listRepositories(account))).find(r => r.id === String(input.id));
    if (!project) throw notFound('Gitlab project');
    const branches = await this.git.call(() => provider.listBranches(account, { owner: project.owner, name: project.name }));
    return branches.map(b => ({ name: b.name, commit: { id: b.commit } }));
  }

  /** No gitlabId names no connection: NOT_FOUND, as the older peer (its field was optional). */
  async testConnection(input: { gitlabId?: string; groupName?: string }): Promise<string> {
    const { organizationId, em, caller } = this.scope;
    if (!input.gitlabId) throw notFound('Gitlab Provider');
    const { gitlab } = await this.git.gitlab(input.gitlabId, organizationId, em, caller);
    return this.git.testConnection('gitlab', await this.git.gitlabAccount(gitlab, em, input.groupName || undefined));
  }

  async update(input: GitlabUpdateInput): Promise<boolean> {
    const { organizationId, em, caller } = this.scope;
    const { gitlab, provider } = await this.git.gitlab(input.gitlabId, organizationId, em, caller);
    if (provider.gitProviderId !== input.gitProviderId) throw notFound('Git provider');
    await this.git.reachable({ gitlabUrl: input.gitlabUrl, gitlabInternalUrl: input.gitlabInternalUrl }, organizationId);
    const seal = (v: string) => (v ? this.cradle.secrets.encrypt(v) : null);
    provider.name = input.name;
    if (input.gitlabUrl !== undefined) gitlab.gitlabUrl = webUrlOf(input.gitlabUrl, 'gitlabUrl');
    if (input.gitlabInternalUrl !== undefined) gitlab.gitlabInternalUrl = input.gitlabInternalUrl ? webUrlOf(input.gitlabInternalUrl, 'gitlabInternalUrl') : null;
    for (const k of ['applicationId', 'redirectUri', 'groupName'] as const) if (input[k] !== undefined) gitlab[k] = input[k] || null;
    for (const k of GITLAB_SECRETS) if (input[k] !== undefined) gitlab[k] = seal(input[k]!);
    if (input.expiresAt !== undefined) gitlab.expiresAt = input.expiresAt;
    await em.flush();
    return true;
  }
}
