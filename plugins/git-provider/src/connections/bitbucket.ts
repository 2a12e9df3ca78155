// bitbucket.*: the caller's Bitbucket connections — made with an API token or an app password, one,
// all, their repositories and branches, the connection test (with the input's credential), the update.
import { newId, notFound } from '@berth/core';
import { GitProviderRecord, BitbucketRecord, type BitbucketRow } from '../entities.ts';
import { providerView, bitbucketRowView, usable, BITBUCKET_SECRETS } from '../records.ts';
import type { BitbucketBranchesInput, BitbucketCreateInput, BitbucketRowView, BitbucketTestInput, BitbucketUpdateInput, BitbucketView, GitProviderView } from '../schemas.ts';
import { ConnectionScope } from './scope.ts';

/** Request-scoped (asClass(...).scoped()): confined to the caller's organization and, for a member, to the connections they may use. */
export class BitbucketConnections extends ConnectionScope {
  /** The peer's create: an API token with its e-mail, or an app password with its user name; sealed. The owner is always the caller. */
  async create(input: BitbucketCreateInput): Promise<BitbucketView> {
    const { organizationId, userId, em } = this.scope;
    const seal = (v: string | null | undefined) => (v ? this.cradle.secrets.encrypt(v) : null);
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

  async one(bitbucketId: string): Promise<BitbucketView> {
    const { organizationId, em, caller } = this.scope;
    const { bitbucket, provider } = await this.git.bitbucket(bitbucketId, organizationId, em, caller);
    return { ...bitbucketRowView(bitbucket), gitProvider: providerView(provider) };
  }

  /** Every Bitbucket connection of the organization, as the peer. */
  async providers(): Promise<{ bitbucketId: string; gitProvider: GitProviderView }[]> {
    return (await this.usableOf<BitbucketRow>('bitbucket', BitbucketRecord)).map(({ provider, record: b }) => ({ bitbucketId: b.bitbucketId, gitProvider: providerView(provider) }));
  }

  async repositories(bitbucketId: string) {
    const { organizationId, em, caller } = this.scope;
    const { bitbucket } = await this.git.bitbucket(bitbucketId, organizationId, em, caller);
    const repos = await this.git.call(() => this.git.provider('bitbucket').listRepositories(this.git.bitbucketAccount(bitbucket)));
    return repos.map(r => ({ name: r.name, url: r.cloneUrl.replace(/\.git$/, ''), slug: r.name, owner: { username: r.owner } }));
  }

  /** Every branch of the workspace's repository; none without bitbucketId, as the peer. */
  async branches(input: BitbucketBranchesInput) {
    const { organizationId, em, caller } = this.scope;
    if (!input.bitbucketId) return [];
    const { bitbucket } = await this.git.bitbucket(input.bitbucketId, organizationId, em, caller);
    const branches = await this.git.call(() => this.git.provider('bitbucket').listBranches(this.git.bitbucketAccount(bitbucket), { owner: input.owner, name: input.repo }));
    return branches.map(b => ({ name: b.name, commit: { sha: b.commit } }));
  }

  /** The same two steps as the others; the input's user, e-mail, workspace and credential (when given) replace the record's for the test. */
  async testConnection(input: BitbucketTestInput): Promise<string> {
    const { organizationId, em, caller } = this.scope;
    const { bitbucket } = await this.git.bitbucket(input.bitbucketId, organizationId, em, caller);
    const { workspaceName, bitbucketId: _id, ...override } = input;
    return this.git.testConnection('bitbucket', this.git.bitbucketAccount(bitbucket, { ...override, ...(workspaceName ? { bitbucketWorkspaceName: workspaceName } : {}) }));
  }

  /** Answers the record as the peer (secrets null). */
  async update(input: BitbucketUpdateInput): Promise<BitbucketRowView> {
    const { organizationId, em, caller } = this.scope;
    const { bitbucket, provider } = await this.git.bitbucket(input.bitbucketId, organizationId, em, caller);
    if (provider.gitProviderId !== input.gitProviderId) throw notFound('Git provider');
    provider.name = input.name;
    for (const k of ['bitbucketUsername', 'bitbucketEmail', 'bitbucketWorkspaceName'] as const) if (input[k] !== undefined) bitbucket[k] = input[k] || null;
    for (const k of BITBUCKET_SECRETS) if (input[k] !== undefined) bitbucket[k] = input[k] ? this.cradle.secrets.encrypt(input[k]) : null;
    await em.flush();
    return bitbucketRowView(bitbucket);
  }
}
