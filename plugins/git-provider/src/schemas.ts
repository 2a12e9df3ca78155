// What gitProvider.* and github.* take and answer, in the peer's field names. No answer carries a
// secret: the peer's nullable secret fields (githubPrivateKey, githubClientSecret,
// githubWebhookSecret) are always null.
import { Type, schema, type Static } from '@berth/core';

const { Nullable, NonEmpty, Timestamp } = schema;
const Id = NonEmpty({ maxLength: 255 });

export const GitProviderView = Type.Object({
  gitProviderId: Type.String(),
  name: Type.String(),
  providerType: Type.String({ description: 'github, gitlab, bitbucket or gitea' }),
  createdAt: Timestamp(),
  organizationId: Type.String(),
  userId: Type.String(),
  sharedWithOrganization: Type.Boolean(),
});
export type GitProviderView = Static<typeof GitProviderView>;

/** A github record's columns; its secrets always null (sealed in Berth, never answered). */
export const GithubFields = {
  githubId: Type.String(),
  gitProviderId: Type.String(),
  githubAppName: Nullable(Type.String()),
  githubAppId: Nullable(Type.Number()),
  githubClientId: Nullable(Type.String()),
  githubClientSecret: Nullable(Type.String({ description: 'sealed in Berth: always null' })),
  githubInstallationId: Nullable(Type.String()),
  githubPrivateKey: Nullable(Type.String({ description: 'sealed in Berth: always null' })),
  githubWebhookSecret: Nullable(Type.String({ description: 'sealed in Berth: always null' })),
  githubUrl: Type.String(),
};
export const GithubRow = Type.Object(GithubFields);
export type GithubRowView = Static<typeof GithubRow>;

export const GithubView = Type.Object({ ...GithubFields, gitProvider: GitProviderView });
export type GithubView = Static<typeof GithubView>;

/** gitProvider.getAll: each connection with its type's record (the App's ids, whether it is configured) and whether the caller owns it. */
export const GitProviderListed = Type.Object({
  ...GitProviderView.properties,
  isOwner: Type.Boolean(),
  github: Nullable(Type.Object({ ...GithubFields, isConfigured: Type.Boolean({ description: 'App id, private key and installation are all set' }) })),
  gitlab: Type.Null({ description: 'GitLab connections are not served yet' }),
  bitbucket: Type.Null({ description: 'Bitbucket connections are not served yet' }),
  gitea: Type.Null({ description: 'Gitea connections are not served yet' }),
});
export type GitProviderListed = Static<typeof GitProviderListed>;

export const GitProviderIdInput = Type.Object({ gitProviderId: Id });
export const ToggleShareInput = Type.Object({ gitProviderId: Id, sharedWithOrganization: Type.Boolean() });
export const GithubIdInput = Type.Object({ githubId: Id });
export const GithubBranchesInput = Type.Object({
  repo: NonEmpty({ maxLength: 255 }),
  owner: NonEmpty({ maxLength: 255 }),
  githubId: Type.Optional(Type.String({ maxLength: 255 })),
});
export const GithubUpdateInput = Type.Object({
  githubId: Id,
  name: NonEmpty({ maxLength: 255 }),
  gitProviderId: Id,
  githubAppName: NonEmpty({ maxLength: 255 }),
});
export type GithubUpdateInput = Static<typeof GithubUpdateInput>;

/** A repository as GitHub lists it (the fields a client picks one by). */
export const GithubRepository = Type.Object({
  id: Type.Number(),
  name: Type.String(),
  full_name: Type.String(),
  owner: Type.Object({ login: Type.String() }),
  private: Type.Boolean(),
  clone_url: Type.String(),
  default_branch: Nullable(Type.String()),
});
export const GithubBranch = Type.Object({ name: Type.String(), commit: Type.Object({ sha: Type.String() }) });

export const GithubProviderListed = Type.Object({ githubId: Type.String(), githubUrl: Type.String(), gitProvider: GitProviderView });

/** Berth's: the manifest flow's start, bound to the caller's organization. */
export const GithubSetupInput = Type.Object({
  githubUrl: Type.Optional(Type.String({ maxLength: 255, description: 'https://github.com (default) or a GitHub Enterprise server\'s URL' })),
});
export const GithubSetupState = Type.Object({
  state: Type.String({ description: 'gh_init:<signed>: pass it as the manifest form\'s state; /api/providers/github/setup accepts it from the caller\'s organization only, for one hour' }),
  setupUrl: Type.String({ description: 'Berth\'s route GitHub sends the user back to (the manifest\'s redirect_url)' }),
});
