// github.*: the caller's GitHub App connections — one, the configured ones, their repositories and
// branches through the App, the connection test, the name's update (the manifest flow makes them:
// setup.ts).
import { notFound } from '@berth/core';
import { GitProviderRecord, GithubRecord, type GithubRow } from '../entities.ts';
import { providerView, githubRowView, usable, configured } from '../records.ts';
import type { GitProviderView, GithubUpdateInput, GithubView } from '../schemas.ts';
import { ConnectionScope } from './scope.ts';

/** Request-scoped (asClass(...).scoped()): confined to the caller's organization and, for a member, to the connections they may use. */
export class GithubConnections extends ConnectionScope {
  async one(githubId: string): Promise<GithubView> {
    const { organizationId, em, caller } = this.scope;
    const { github, provider } = await this.git.github(githubId, organizationId, em, caller);
    return { ...githubRowView(github), gitProvider: providerView(provider) };
  }

  /** The configured GitHub connections (App id, key and installation set). */
  async providers(): Promise<{ githubId: string; githubUrl: string; gitProvider: GitProviderView }[]> {
    return (await this.usableOf<GithubRow>('github', GithubRecord)).flatMap(({ provider, record: g }) =>
      configured(g) ? [{ githubId: g.githubId, githubUrl: g.githubUrl, gitProvider: providerView(provider) }] : [],
    );
  }

  async repositories(githubId: string) {
    const { organizationId, em, caller } = this.scope;
    const { github } = await this.git.github(githubId, organizationId, em, caller);
    const repos = await this.git.call(() => this.git.provider('github').listRepositories(this.git.githubAccount(github)));
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

  async branches(input: { githubId?: string; owner: string; repo: string }) {
    const { organizationId, em, caller } = this.scope;
    if (!input.githubId) return [];
    const { github } = await this.git.github(input.githubId, organizationId, em, caller);
    const branches = await this.git.call(() => this.git.provider('github').listBranches(this.git.githubAccount(github), { owner: input.owner, name: input.repo }));
    return branches.map(b => ({ name: b.name, commit: { sha: b.commit } }));
  }

  /**
   * The path a deploy takes, both halves: the API lists the repositories, then `git ls-remote` runs
   * with a fresh clone credential on the first one. A failure names its step; success answers as the peer.
   */
  async testConnection(githubId: string): Promise<string> {
    const { organizationId, em, caller } = this.scope;
    const { github } = await this.git.github(githubId, organizationId, em, caller);
    return this.git.testConnection('github', this.git.githubAccount(github));
  }

  async update(input: GithubUpdateInput): Promise<boolean> {
    const { organizationId, em, caller } = this.scope;
    const { github, provider } = await this.git.github(input.githubId, organizationId, em, caller);
    if (provider.gitProviderId !== input.gitProviderId) throw notFound('Git provider');
    provider.name = input.name;
    github.githubAppName = input.githubAppName;
    await em.flush();
    return true;
  }
}
