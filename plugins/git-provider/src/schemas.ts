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

/** A gitlab record's columns (the peer's); its secret and tokens always null (sealed in Berth, never answered). */
export const GitlabFields = {
  gitlabId: Type.String(),
  gitlabUrl: Type.String(),
  gitlabInternalUrl: Nullable(Type.String()),
  applicationId: Nullable(Type.String()),
  redirectUri: Nullable(Type.String()),
  secret: Nullable(Type.String({ description: 'sealed in Berth: always null' })),
  accessToken: Nullable(Type.String({ description: 'sealed in Berth: always null' })),
  refreshToken: Nullable(Type.String({ description: 'sealed in Berth: always null' })),
  groupName: Nullable(Type.String()),
  expiresAt: Nullable(Type.Number({ description: 'seconds since the epoch' })),
  gitProviderId: Type.String(),
};
export const GitlabRow = Type.Object(GitlabFields);
export type GitlabRowView = Static<typeof GitlabRow>;
export const GitlabView = Type.Object({ ...GitlabFields, gitProvider: GitProviderView });
export type GitlabView = Static<typeof GitlabView>;

/** A bitbucket record's columns (the peer's); its API token and app password always null (sealed in Berth, never answered). */
export const BitbucketFields = {
  bitbucketId: Type.String(),
  bitbucketUsername: Nullable(Type.String()),
  bitbucketEmail: Nullable(Type.String()),
  appPassword: Nullable(Type.String({ description: 'sealed in Berth: always null' })),
  apiToken: Nullable(Type.String({ description: 'sealed in Berth: always null' })),
  bitbucketWorkspaceName: Nullable(Type.String()),
  gitProviderId: Type.String(),
};
export const BitbucketRow = Type.Object(BitbucketFields);
export type BitbucketRowView = Static<typeof BitbucketRow>;
export const BitbucketView = Type.Object({ ...BitbucketFields, gitProvider: GitProviderView });
export type BitbucketView = Static<typeof BitbucketView>;

/** A gitea record's columns (the peer's); its client secret and tokens always null (sealed in Berth, never answered). */
export const GiteaFields = {
  giteaId: Type.String(),
  giteaUrl: Type.String(),
  giteaInternalUrl: Nullable(Type.String()),
  redirectUri: Nullable(Type.String()),
  clientId: Nullable(Type.String()),
  clientSecret: Nullable(Type.String({ description: 'sealed in Berth: always null' })),
  gitProviderId: Type.String(),
  accessToken: Nullable(Type.String({ description: 'sealed in Berth: always null' })),
  refreshToken: Nullable(Type.String({ description: 'sealed in Berth: always null' })),
  expiresAt: Nullable(Type.Number({ description: 'seconds since the epoch' })),
  scopes: Nullable(Type.String()),
  lastAuthenticatedAt: Nullable(Type.Number({ description: 'seconds since the epoch' })),
  giteaUsername: Nullable(Type.String()),
  organizationName: Nullable(Type.String()),
};
export const GiteaRow = Type.Object(GiteaFields);
export type GiteaRowView = Static<typeof GiteaRow>;
export const GiteaView = Type.Object({ ...GiteaFields, gitProvider: GitProviderView });
export type GiteaView = Static<typeof GiteaView>;

/** gitProvider.getAll: each connection with its type's record (the App's ids, whether it is configured) and whether the caller owns it. */
export const GitProviderListed = Type.Object({
  ...GitProviderView.properties,
  isOwner: Type.Boolean(),
  github: Nullable(Type.Object({ ...GithubFields, isConfigured: Type.Boolean({ description: 'App id, private key and installation are all set' }) })),
  gitlab: Nullable(Type.Object({ ...GitlabFields })),
  bitbucket: Nullable(Type.Object({ ...BitbucketFields })),
  gitea: Nullable(Type.Object({ ...GiteaFields })),
});
export type GitProviderListed = Static<typeof GitProviderListed>;

export const GitProviderIdInput = Type.Object({ gitProviderId: Id });
export const ToggleShareInput = Type.Object({ gitProviderId: Id, sharedWithOrganization: Type.Boolean() });
export const GithubIdInput = Type.Object({ githubId: Id });
export const GithubBranchesInput = Type.Object({ repo: NonEmpty({ maxLength: 255 }), owner: NonEmpty({ maxLength: 255 }), githubId: Type.Optional(Type.String({ maxLength: 255 })) });
export const GithubUpdateInput = Type.Object({ githubId: Id, name: NonEmpty({ maxLength: 255 }), gitProviderId: Id, githubAppName: NonEmpty({ maxLength: 255 }) });
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
export const GithubSetupInput = Type.Object({ githubUrl: Type.Optional(Type.String({ maxLength: 255, description: "https://github.com (default) or a GitHub Enterprise server's URL" })) });
export const GithubSetupState = Type.Object({
  state: Type.String({ description: "gh_init:<signed>: pass it as the manifest form's state; /api/providers/github/setup accepts it from the caller's organization only, for one hour" }),
  setupUrl: Type.String({ description: "Berth's route GitHub sends the user back to (the manifest's redirect_url)" }),
});

/** Berth's: the installation's state, bound to the caller and the connection. */
export const GithubInstallState = Type.Object({
  state: Type.String({ description: "gh_setup:<signed>: the state of the App's installation page; /api/providers/github/setup accepts it from the caller only, for this connection, for one hour" }),
  installUrl: Type.String({ description: "the App's installation page on GitHub, with the state" }),
});

// ------------------------------------------------------------------ gitlab.*
// Both of the spec's variants on one path: the current one requires gitlabUrl (here optional,
// https://gitlab.com by default) and the older one carries the OAuth fields and tokens.
const Str = (description?: string) => Type.String({ maxLength: 255, ...(description ? { description } : {}) });
const Token = () => Type.String({ maxLength: 4096 });
const GitlabUrl = (description: string) => NonEmpty({ maxLength: 255, description });
const GitlabOptional = {
  gitlabInternalUrl: Type.Optional(Nullable(Str('where Berth reaches the server when it differs from gitlabUrl'))),
  applicationId: Type.Optional(Str("the OAuth application's id")),
  secret: Type.Optional(Token()),
  redirectUri: Type.Optional(Str("the OAuth application's callback (<Berth>/api/providers/gitlab/callback)")),
  groupName: Type.Optional(Str('keep the projects of these groups (comma-separated) and their subgroups')),
  accessToken: Type.Optional(Token()),
  refreshToken: Type.Optional(Token()),
  expiresAt: Type.Optional(Nullable(Type.Integer({ minimum: 0, description: 'seconds since the epoch' }))),
};
export const GitlabCreateInput = Type.Object({
  authId: NonEmpty({ maxLength: 255, description: "the peer's; the owner is always the caller, whatever it names" }),
  name: NonEmpty({ maxLength: 255 }),
  gitlabUrl: Type.Optional(GitlabUrl('https://gitlab.com (default) or a self-managed server')),
  gitlabId: Type.Optional(Str('ignored: Berth names the record')),
  gitProviderId: Type.Optional(Str('ignored: Berth names the record')),
  ...GitlabOptional,
});
export type GitlabCreateInput = Static<typeof GitlabCreateInput>;
export const GitlabIdInput = Type.Object({ gitlabId: Id });
export const GitlabBranchesInput = Type.Object({
  owner: Type.String({ maxLength: 255 }),
  repo: Type.String({ maxLength: 255 }),
  id: Type.Optional(Type.Integer({ minimum: 0, description: 'the project id (none: no branches, as the peer)' })),
  gitlabId: Type.Optional(Str()),
});
export type GitlabBranchesInput = Static<typeof GitlabBranchesInput>;
export const GitlabTestInput = Type.Object({
  gitlabId: Type.Optional(Str('none names no connection: NOT_FOUND, as the older peer')),
  groupName: Type.Optional(Str("filter the listing by these groups instead of the record's")),
});
export const GitlabUpdateInput = Type.Object({
  gitlabId: Id,
  gitProviderId: Id,
  name: NonEmpty({ maxLength: 255 }),
  gitlabUrl: Type.Optional(GitlabUrl('gitlab.com or a self-managed server')),
  ...GitlabOptional,
});
export type GitlabUpdateInput = Static<typeof GitlabUpdateInput>;
/** A project as the peer lists it. */
export const GitlabRepository = Type.Object({
  id: Type.Number(),
  name: Type.String(),
  url: Type.String({ description: 'the path with namespace (group/sub/project)' }),
  owner: Type.Object({ username: Type.String({ description: "the namespace's last segment" }) }),
});
export const GitlabBranch = Type.Object({ name: Type.String(), commit: Type.Object({ id: Type.String() }) });
export const GitlabProviderListed = Type.Object({ gitlabId: Type.String(), gitlabUrl: Type.String(), gitProvider: GitProviderView });
/** Berth's: the OAuth authorization's start, bound to the caller's organization and the record. */
export const GitlabAuthorization = Type.Object({
  state: Type.String({ description: 'signed: /api/providers/gitlab/callback accepts it from this organization, for this record, for one hour' }),
  authorizeUrl: Type.String({ description: "GitLab's authorization page to send the user to (client id, redirect URI and state filled in)" }),
});

// ------------------------------------------------------------------ bitbucket.*
// The spec's current variant: an API token with its account's e-mail (bitbucketEmail, e-mail
// format when present), or an older app password with its user name; a workspace to list.
const BitbucketEmail = () => Type.Optional(Type.String({ format: 'email', minLength: 1, maxLength: 255, description: "the Atlassian account's e-mail (the API's user with an API token)" }));
const BitbucketCredentials = { bitbucketUsername: Type.Optional(Str()), bitbucketEmail: BitbucketEmail(), appPassword: Type.Optional(Token()), apiToken: Type.Optional(Token()) };
export const BitbucketCreateInput = Type.Object({
  authId: NonEmpty({ maxLength: 255, description: "the peer's; the owner is always the caller, whatever it names" }),
  name: NonEmpty({ maxLength: 255 }),
  bitbucketId: Type.Optional(Str('ignored: Berth names the record')),
  gitProviderId: Type.Optional(Str('ignored: Berth names the record')),
  ...BitbucketCredentials,
  bitbucketWorkspaceName: Type.Optional(Str('the workspace whose repositories are listed (default: the user name)')),
});
export type BitbucketCreateInput = Static<typeof BitbucketCreateInput>;
export const BitbucketIdInput = Type.Object({ bitbucketId: Id });
export const BitbucketBranchesInput = Type.Object({ owner: Str('the workspace'), repo: Str("the repository's slug"), bitbucketId: Type.Optional(Str()) });
export type BitbucketBranchesInput = Static<typeof BitbucketBranchesInput>;
export const BitbucketTestInput = Type.Object({ bitbucketId: Id, ...BitbucketCredentials, workspaceName: Type.Optional(Str("list this workspace instead of the record's")) });
export type BitbucketTestInput = Static<typeof BitbucketTestInput>;
export const BitbucketUpdateInput = Type.Object({
  bitbucketId: Id,
  gitProviderId: Id,
  name: NonEmpty({ maxLength: 255 }),
  ...BitbucketCredentials,
  bitbucketWorkspaceName: Type.Optional(Str()),
  organizationId: Type.Optional(Str("ignored: the caller's organization")),
});
export type BitbucketUpdateInput = Static<typeof BitbucketUpdateInput>;
/** A repository as the peer lists it. */
export const BitbucketRepository = Type.Object({
  name: Type.String(),
  url: Type.String({ description: "the repository's web page" }),
  slug: Type.String(),
  owner: Type.Object({ username: Type.String({ description: 'the workspace' }) }),
});
export const BitbucketBranch = Type.Object({ name: Type.String(), commit: Type.Object({ sha: Type.String() }) });
export const BitbucketProviderListed = Type.Object({ bitbucketId: Type.String(), gitProvider: GitProviderView });

// ------------------------------------------------------------------ gitea.*
// The peer's current router: an OAuth application on a Gitea server; /api/providers/gitea/authorize
// and /api/providers/gitea/callback give it its tokens.
const GiteaOptional = {
  giteaInternalUrl: Type.Optional(Nullable(Str('where Berth reaches the server when it differs from giteaUrl'))),
  redirectUri: Type.Optional(Str("the OAuth application's callback (<Berth>/api/providers/gitea/callback)")),
  clientId: Type.Optional(Str("the OAuth application's client id")),
  clientSecret: Type.Optional(Token()),
  accessToken: Type.Optional(Token()),
  refreshToken: Type.Optional(Token()),
  expiresAt: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e11, description: 'seconds since the epoch' })),
  scopes: Type.Optional(Str()),
  lastAuthenticatedAt: Type.Optional(Type.Integer({ minimum: 0, maximum: 1e11 })),
  giteaUsername: Type.Optional(Str()),
  organizationName: Type.Optional(Str("keep that owner's repositories in the listings")),
};
const GiteaUrl = () => NonEmpty({ maxLength: 255, description: "the Gitea server's address" });
export const GiteaCreateInput = Type.Object({
  giteaId: Type.Optional(Str('ignored: Berth names the record')),
  gitProviderId: Type.Optional(Str('ignored: Berth names the record')),
  giteaUrl: GiteaUrl(),
  name: NonEmpty({ maxLength: 255 }),
  ...GiteaOptional,
});
export type GiteaCreateInput = Static<typeof GiteaCreateInput>;
export const GiteaIdInput = Type.Object({ giteaId: Id });
export const GiteaBranchesInput = Type.Object({ owner: NonEmpty({ maxLength: 255 }), repositoryName: NonEmpty({ maxLength: 255 }), giteaId: Type.Optional(Str()) });
export type GiteaBranchesInput = Static<typeof GiteaBranchesInput>;
export const GiteaTestInput = Type.Object({
  giteaId: Type.Optional(Str('none names no connection: NOT_FOUND')),
  organizationName: Type.Optional(Str("filter the listing by this owner instead of the record's")),
});
export const GiteaUpdateInput = Type.Object({ giteaId: Id, giteaUrl: GiteaUrl(), gitProviderId: Id, name: NonEmpty({ maxLength: 255 }), ...GiteaOptional });
export type GiteaUpdateInput = Static<typeof GiteaUpdateInput>;
/** gitea.create's answer, as the peer's. */
export const GiteaCreated = Type.Object({ giteaId: Type.String(), clientId: Type.String(), giteaUrl: Type.String() });
/** A repository as the peer lists it. */
export const GiteaRepository = Type.Object({ id: Type.Number(), name: Type.String(), url: Type.String({ description: 'owner/name' }), owner: Type.Object({ username: Type.String() }) });
export const GiteaBranch = Type.Object({ id: Type.String(), name: Type.String(), commit: Type.Object({ id: Type.String() }) });
export const GiteaProviderListed = Type.Object({ giteaId: Type.String(), gitProvider: GitProviderView });
