// A workload's git source as a change applies it, for every kind that deploys from a forge
// (application, compose, a third party's): the rule of who may change it, a connection field
// (githubId, gitlabId, a forge's own) checked to name a connection of the organization the caller
// may use, and every enabled forge's source fields kept — those of a forge written out of tree
// too, which no kind's own table lists. The git provider plugin answers the rules (it may be disabled).
import type { EntityManager, Principal } from '@berth/core';

/** What the git provider plugin says of a workload's git source (its GitProviderService). */
export interface GitSourceRules {
  /** The workload field that names a connection, per forge type. */
  connectionFields(): Map<string, string>;
  /** Every enabled forge's source fields. */
  sourceFieldNames(): Set<string>;
  /** NOT_FOUND unless `id` names a connection of the organization; FORBIDDEN naming the field when the caller may not use it. */
  connection(field: string, id: string, organizationId: string, em: EntityManager, caller?: Pick<Principal, 'userId' | 'role'>): Promise<unknown>;
  /** FORBIDDEN when a member changes the source of a workload deploying from a connection they may not use. */
  assertMayChangeSource(current: Record<string, unknown>, changes: Record<string, unknown>, organizationId: string, em: EntityManager, caller?: Pick<Principal, 'userId' | 'role'>): Promise<void>;
}

/** The peer's git source fields of a workload (github's, gitlab's, bitbucket's, gitea's, a custom URL's), all forgotten: what disconnectGitProvider changes, besides a kind's own. */
export const GIT_SOURCE_CLEARED = {
  repository: null,
  owner: null,
  branch: null,
  githubId: null,
  gitlabRepository: null,
  gitlabOwner: null,
  gitlabBranch: null,
  gitlabId: null,
  gitlabProjectId: null,
  gitlabPathNamespace: null,
  bitbucketRepository: null,
  bitbucketRepositorySlug: null,
  bitbucketOwner: null,
  bitbucketBranch: null,
  bitbucketId: null,
  giteaRepository: null,
  giteaOwner: null,
  giteaBranch: null,
  giteaId: null,
  customGitUrl: null,
  customGitBranch: null,
  customGitSSHKeyId: null,
} as const;

/** Whose change it is: the organization, the request's transaction, the caller (none: Berth itself). */
export interface ChangeScope {
  organizationId: string;
  em: EntityManager;
  caller?: Pick<Principal, 'userId' | 'role'>;
}

export class GitSourceChange {
  readonly #git: GitSourceRules | undefined;
  readonly #connections: Map<string, string> | undefined;
  readonly #fields: Set<string> | undefined;
  readonly #scope: ChangeScope;

  private constructor(git: GitSourceRules | undefined, scope: ChangeScope) {
    this.#git = git;
    this.#connections = git?.connectionFields();
    this.#fields = git?.sourceFieldNames();
    this.#scope = scope;
  }

  /** Checks the rule of who may change the source (`current`: the stored settings with sourceType), then applies fields one by one. */
  static async begin(git: GitSourceRules | undefined, current: Record<string, unknown>, changes: Record<string, unknown>, scope: ChangeScope): Promise<GitSourceChange> {
    await git?.assertMayChangeSource(current, changes, scope.organizationId, scope.em, scope.caller);
    return new GitSourceChange(git, scope);
  }

  /** A connection field, checked (resent unchanged: not a new link, so not the caller's to use); answers false for any other key. */
  async connection(key: string, value: unknown, settings: Record<string, unknown>): Promise<boolean> {
    if (!this.#connections?.has(key) || typeof value !== 'string' || !value) return false;
    const { organizationId, em, caller } = this.#scope;
    await this.#git!.connection(key, value, organizationId, em, settings[key] === value ? undefined : caller);
    settings[key] = value;
    return true;
  }

  /** Whether a key is some enabled forge's source field (kept in the settings with the kind's own). */
  isForgeField(key: string): boolean {
    return Boolean(this.#fields?.has(key));
  }
}
