// What a Gitea connection keeps and how its router answers: the peer's gitea table and gitea.*
// procedures (field names, inputs, answers), kept by the git-provider plugin in its generic
// connection record: an OAuth application on a Gitea server, to which the peer's
// /api/providers/gitea/authorize and /api/providers/gitea/callback give its tokens (Gitea's OAuth
// flow). The peer's create and update store the fields as given.
import { Type, schema, type GitConnectionForm } from '@berth/core';

const { NonEmpty, Nullable } = schema;
const Id = NonEmpty({ maxLength: 255 });
const Str = (description?: string) => Type.String({ maxLength: 255, ...(description ? { description } : {}) });
const Token = () => Type.String({ maxLength: 4096 });
const Url = () => NonEmpty({ maxLength: 255, description: "the Gitea server's address" });
const Optional = {
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

export const GITEA_COM = 'https://gitea.com';

const Text = () => Type.Optional(Nullable(Type.String()));
/** application.saveGiteaProvider's fields, as the peer takes them. */
export const giteaSave = { giteaBuildPath: Text(), giteaOwner: Text(), giteaRepository: Text(), giteaId: Text(), giteaBranch: Type.Optional(schema.BranchName()) };

export const giteaConnection: GitConnectionForm = {
  settings: Type.Object({
    giteaUrl: Type.String(),
    giteaInternalUrl: Type.String({ description: 'where Berth reaches the server when it differs from what users see' }),
    redirectUri: Type.String(),
    clientId: Type.String({ description: "the OAuth application's client id" }),
    expiresAt: Type.Number({ description: 'seconds since the epoch' }),
    scopes: Type.String(),
    lastAuthenticatedAt: Type.Number({ description: 'seconds since the epoch: the last testConnection that got through' }),
    giteaUsername: Type.String(),
    organizationName: Type.String({ description: "keeps that owner's repositories in the listings" }),
  }),
  secrets: Type.Object({ clientSecret: Type.String({ description: "the OAuth application's secret" }), accessToken: Type.String(), refreshToken: Type.String() }),
  oauth: {
    clientId: 'clientId',
    redirectUri: 'redirectUri',
    scope: 'read:user repo',
    authorizePage: account => `${String(account.settings.giteaUrl ?? GITEA_COM).replace(/\/+$/, '')}/login/oauth/authorize`,
    start: 'route',
  },
  wire: {
    record: true,
    webUrls: ['giteaUrl', 'giteaInternalUrl'],
    defaults: { giteaUrl: GITEA_COM },
    unjoined: ['giteaUsername', 'organizationName'],
    create: {
      summary:
        'Connect a Gitea OAuth application (giteaUrl; giteaInternalUrl where Berth reaches it); /api/providers/gitea/authorize then the callback give it its tokens. Answers its id, client id and URL, as the peer',
      checked: false,
      fields: ['giteaId', 'clientId', 'giteaUrl'],
      input: Type.Object({
        giteaId: Type.Optional(Str('ignored: Berth names the record')),
        gitProviderId: Type.Optional(Str('ignored: Berth names the record')),
        giteaUrl: Url(),
        name: NonEmpty({ maxLength: 255 }),
        ...Optional,
      }),
    },
    providers: { summary: 'The Gitea connections whose OAuth application is set (client id and secret), as the peer', fields: ['giteaId'], when: ['clientId', 'clientSecret'] },
    repositories: {
      summary: "Every repository the token reaches (all pages; the record's organizationName filters them), the token renewed first when it expires soon",
      output: Type.Object({ id: Type.Number(), name: Type.String(), url: Type.String({ description: 'owner/name' }), owner: Type.Object({ username: Type.String() }) }),
      view: r => ({ id: Number(r.id), name: r.name, url: `${r.owner}/${r.name}`, owner: { username: r.owner } }),
    },
    branches: {
      summary: 'Every branch of owner/repositoryName (all pages); giteaId is required, as the peer',
      idRequired: true,
      input: Type.Object({ owner: NonEmpty({ maxLength: 255 }), repositoryName: NonEmpty({ maxLength: 255 }), giteaId: Type.Optional(Str()) }),
      output: Type.Object({ id: Type.String(), name: Type.String(), commit: Type.Object({ id: Type.String() }) }),
      repository: input => ({ owner: String(input.owner), name: String(input.repositoryName) }),
      view: b => ({ id: b.name, name: b.name, commit: { id: b.commit } }),
    },
    testConnection: {
      summary: "Runs a deploy's path: lists the repositories (API), then git ls-remote on the first with the clone credential; a failure says which step. No giteaId: NOT_FOUND",
      input: Type.Object({ giteaId: Type.Optional(Str('none names no connection: NOT_FOUND')), organizationName: Type.Optional(Str("filter the listing by this owner instead of the record's")) }),
      account: (input, stored) => (input.organizationName ? { ...stored, settings: { ...stored.settings, organizationName: String(input.organizationName) } } : stored),
      stamp: 'lastAuthenticatedAt',
    },
    update: {
      summary: 'Rename the connection and change its fields (client secret and tokens sealed)',
      checked: false,
      answer: 'success',
      input: Type.Object({ giteaId: Id, giteaUrl: Url(), gitProviderId: Id, name: NonEmpty({ maxLength: 255 }), ...Optional }),
    },
    settingQueries: { getGiteaUrl: { setting: 'giteaUrl', summary: "The connection's Gitea URL" } },
  },
};
