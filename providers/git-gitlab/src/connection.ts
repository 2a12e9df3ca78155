// What a GitLab connection keeps and how its router answers: the peer's gitlab table and gitlab.*
// procedures (field names, inputs, answers), kept by the git-provider plugin in its generic
// connection record. Both of the spec's variants on one path: the current one requires gitlabUrl
// (here optional, https://gitlab.com by default) and the older one carries the OAuth fields and
// tokens. The peer's create and update store the fields as given; Berth's gitlab.authorization and
// the peer's /api/providers/gitlab/callback give a connection its tokens (GitLab's OAuth flow).
import { Type, schema, type GitConnectionForm } from '@berth/core';

const { NonEmpty, Nullable } = schema;
const Id = NonEmpty({ maxLength: 255 });
const Str = (description?: string) => Type.String({ maxLength: 255, ...(description ? { description } : {}) });
const Token = () => Type.String({ maxLength: 4096 });
const Url = (description: string) => NonEmpty({ maxLength: 255, description });
const Optional = {
  gitlabInternalUrl: Type.Optional(Nullable(Str('where Berth reaches the server when it differs from gitlabUrl'))),
  applicationId: Type.Optional(Str("the OAuth application's id")),
  secret: Type.Optional(Token()),
  redirectUri: Type.Optional(Str("the OAuth application's callback (<Berth>/api/providers/gitlab/callback)")),
  groupName: Type.Optional(Str('keep the projects of these groups (comma-separated) and their subgroups')),
  accessToken: Type.Optional(Token()),
  refreshToken: Type.Optional(Token()),
  expiresAt: Type.Optional(Nullable(Type.Integer({ minimum: 0, description: 'seconds since the epoch' }))),
};

export const GITLAB_COM = 'https://gitlab.com';

const Text = () => Type.Optional(Nullable(Type.String()));
/** application.saveGitlabProvider's fields, as the peer takes them. */
export const gitlabSave = {
  gitlabBuildPath: Text(),
  gitlabOwner: Text(),
  gitlabRepository: Text(),
  gitlabId: Text(),
  gitlabProjectId: Type.Optional(Nullable(Type.Number())),
  gitlabPathNamespace: Text(),
  gitlabBranch: Type.Optional(schema.BranchName()),
};

export const gitlabConnection: GitConnectionForm = {
  settings: Type.Object({
    gitlabUrl: Type.String(),
    gitlabInternalUrl: Type.String({ description: 'where Berth reaches the server when it differs from what users see' }),
    applicationId: Type.String({ description: "the OAuth application's id" }),
    redirectUri: Type.String(),
    groupName: Type.String(),
    expiresAt: Type.Number({ description: 'seconds since the epoch' }),
  }),
  secrets: Type.Object({ secret: Type.String({ description: "the OAuth application's secret" }), accessToken: Type.String(), refreshToken: Type.String() }),
  oauth: {
    clientId: 'applicationId',
    redirectUri: 'redirectUri',
    scope: 'api read_user read_repository',
    authorizePage: account => `${String(account.settings.gitlabUrl ?? GITLAB_COM).replace(/\/+$/, '')}/oauth/authorize`,
    redirectNamesConnection: true,
    start: 'procedure',
  },
  wire: {
    record: true,
    webUrls: ['gitlabUrl', 'gitlabInternalUrl'],
    defaults: { gitlabUrl: GITLAB_COM },
    create: {
      summary:
        'Connect a GitLab OAuth application (gitlab.com by default, or a self-managed server); gitlab.authorization then the callback give it its tokens. The owner is the caller, whatever authId names',
      checked: false,
      input: Type.Object({
        authId: NonEmpty({ maxLength: 255, description: "the peer's; the owner is always the caller, whatever it names" }),
        name: NonEmpty({ maxLength: 255 }),
        gitlabUrl: Type.Optional(Url('https://gitlab.com (default) or a self-managed server')),
        gitlabId: Type.Optional(Str('ignored: Berth names the record')),
        gitProviderId: Type.Optional(Str('ignored: Berth names the record')),
        ...Optional,
      }),
    },
    providers: { summary: 'The GitLab connections that are authorized (access and refresh token set)', fields: ['gitlabId', 'gitlabUrl'], when: ['accessToken', 'refreshToken'] },
    repositories: {
      summary: "Every project the connection reaches (all pages; the record's groupName filters them), the token renewed first when it expires soon",
      output: Type.Object({
        id: Type.Number(),
        name: Type.String(),
        url: Type.String({ description: 'the path with namespace (group/sub/project)' }),
        owner: Type.Object({ username: Type.String({ description: "the namespace's last segment" }) }),
      }),
      view: r => ({ id: Number(r.id), name: r.name, url: `${r.owner}/${r.name}`, owner: { username: r.owner.split('/').pop()! } }),
    },
    branches: {
      summary: 'Every branch of the project id names (all pages); none without gitlabId or id, as the peer',
      input: Type.Object({
        owner: Type.String({ maxLength: 255 }),
        repo: Type.String({ maxLength: 255 }),
        id: Type.Optional(Type.Integer({ minimum: 0, description: 'the project id (none: no branches, as the peer)' })),
        gitlabId: Type.Optional(Str()),
      }),
      output: Type.Object({ name: Type.String(), commit: Type.Object({ id: Type.String() }) }),
      repository: input => (input.id === undefined || input.id === null ? null : { id: String(input.id) }),
      view: b => ({ name: b.name, commit: { id: b.commit } }),
    },
    testConnection: {
      summary: "Runs a deploy's path: lists the projects (API), then git ls-remote on the first with the clone credential; a failure says which step. No gitlabId: NOT_FOUND",
      input: Type.Object({
        gitlabId: Type.Optional(Str('none names no connection: NOT_FOUND, as the older peer')),
        groupName: Type.Optional(Str("filter the listing by these groups instead of the record's")),
      }),
      account: (input, stored) => (input.groupName ? { ...stored, settings: { ...stored.settings, groupName: String(input.groupName) } } : stored),
    },
    update: {
      summary: 'Rename the connection and change its fields (secret and tokens sealed)',
      checked: false,
      answer: 'ok',
      input: Type.Object({ gitlabId: Id, gitProviderId: Id, name: NonEmpty({ maxLength: 255 }), gitlabUrl: Type.Optional(Url('gitlab.com or a self-managed server')), ...Optional }),
    },
  },
};
