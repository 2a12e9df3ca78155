// What a Bitbucket connection keeps and how its router answers: the peer's bitbucket table and
// bitbucket.* procedures (field names, inputs, answers), kept by the git-provider plugin in its
// generic connection record. The spec's current variant connects with an API token and its
// Atlassian account's e-mail (e-mail format when present), the older one with an app password and
// its user name; a workspace narrows the listings. The peer's create and update store the fields
// as given (testConnection is where they meet Bitbucket), and its testConnection tests the
// credentials the call gives in place of the stored ones.
import { Type, schema, type GitAccount, type GitConnectionForm } from '@berth/core';

const { NonEmpty } = schema;
const Id = NonEmpty({ maxLength: 255 });
const Str = (description?: string) => Type.String({ maxLength: 255, ...(description ? { description } : {}) });
const Token = () => Type.String({ maxLength: 4096 });
const Email = () => Type.Optional(Type.String({ format: 'email', minLength: 1, maxLength: 255, description: "the Atlassian account's e-mail (the API's user with an API token)" }));
const Credentials = { bitbucketUsername: Type.Optional(Str()), bitbucketEmail: Email(), appPassword: Type.Optional(Token()), apiToken: Type.Optional(Token()) };

const Text = () => Type.Optional(schema.Nullable(Type.String()));
/** application.saveBitbucketProvider's fields, as the peer takes them. */
export const bitbucketSave = {
  bitbucketBuildPath: Text(),
  bitbucketOwner: Text(),
  bitbucketRepository: Text(),
  bitbucketRepositorySlug: Text(),
  bitbucketId: Text(),
  bitbucketBranch: Type.Optional(schema.BranchName()),
};

/** The settings a connection's API and git calls read, and the secrets (sealed). */
const settings = Type.Object({ bitbucketUsername: Type.String(), bitbucketEmail: Type.String(), bitbucketWorkspaceName: Type.String() });
const secrets = Type.Object({ appPassword: Type.String({ description: 'an app password (older records; Atlassian is retiring them)' }), apiToken: Type.String({ description: 'an API token' }) });

/** A text the call gives, else the stored one; null when neither has one. */
const either = (given: unknown, stored: unknown) => (typeof given === 'string' && given ? given : typeof stored === 'string' && stored ? stored : null);

export const bitbucketConnection: GitConnectionForm = {
  settings,
  secrets,
  wire: {
    record: true,
    create: {
      summary: 'Connect a Bitbucket Cloud account: an API token with its Atlassian e-mail, or an older app password with its user name (sealed). The owner is the caller, whatever authId names',
      checked: false,
      input: Type.Object({
        authId: NonEmpty({ maxLength: 255, description: "the peer's; the owner is always the caller, whatever it names" }),
        name: NonEmpty({ maxLength: 255 }),
        bitbucketId: Type.Optional(Str('ignored: Berth names the record')),
        gitProviderId: Type.Optional(Str('ignored: Berth names the record')),
        ...Credentials,
        bitbucketWorkspaceName: Type.Optional(Str('the workspace whose repositories are listed (default: the user name)')),
      }),
    },
    providers: { summary: "The organization's Bitbucket connections", fields: ['bitbucketId'] },
    repositories: {
      summary: "Every repository of the connection's workspace (or user), all pages",
      output: Type.Object({
        name: Type.String(),
        url: Type.String({ description: "the repository's web page" }),
        slug: Type.String(),
        owner: Type.Object({ username: Type.String({ description: 'the workspace' }) }),
      }),
      view: r => ({ name: r.name, url: r.cloneUrl.replace(/\.git$/, ''), slug: r.name, owner: { username: r.owner } }),
    },
    branches: {
      summary: 'Every branch of a repository (owner: the workspace, repo: the slug; all pages); none without bitbucketId, as the peer',
      input: Type.Object({ owner: Str('the workspace'), repo: Str("the repository's slug"), bitbucketId: Type.Optional(Str()) }),
      output: Type.Object({ name: Type.String(), commit: Type.Object({ sha: Type.String() }) }),
      repository: input => ({ owner: String(input.owner), name: String(input.repo) }),
      view: b => ({ name: b.name, commit: { sha: b.commit } }),
    },
    testConnection: {
      summary:
        "Runs a deploy's path: lists the repositories (API), then git ls-remote on the first with the clone credential; a failure says which step (a refused app password says Atlassian is retiring them)",
      input: Type.Object({ bitbucketId: Id, ...Credentials, workspaceName: Type.Optional(Str("list this workspace instead of the record's")) }),
      account: (input, stored): GitAccount => ({
        settings: {
          bitbucketUsername: either(input.bitbucketUsername, stored.settings.bitbucketUsername),
          bitbucketEmail: either(input.bitbucketEmail, stored.settings.bitbucketEmail),
          bitbucketWorkspaceName: either(input.workspaceName, stored.settings.bitbucketWorkspaceName),
        },
        // A credential given replaces both stored ones for the test.
        secrets: input.apiToken || input.appPassword ? { apiToken: either(input.apiToken, null), appPassword: either(input.appPassword, null) } : stored.secrets,
      }),
    },
    update: {
      summary: 'Rename the connection and change its fields (API token and app password sealed); answers the record, secrets null',
      checked: false,
      answer: 'record',
      input: Type.Object({
        bitbucketId: Id,
        gitProviderId: Id,
        name: NonEmpty({ maxLength: 255 }),
        ...Credentials,
        bitbucketWorkspaceName: Type.Optional(Str()),
        organizationId: Type.Optional(Str("ignored: the caller's organization")),
      }),
    },
  },
};
