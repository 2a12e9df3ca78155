// A connected git hosting account: one git_providers row (what every type shares: name, type,
// owner, sharing) and one row of its type's table (github_providers: the App's ids and sealed
// secrets; gitlab_providers: the OAuth application and its sealed tokens; bitbucket_providers: the account and its sealed API token or app password; gitea_providers: the OAuth application and its sealed tokens; git_connections: a forge written out of tree, its settings and sealed secrets as the forge declares them). Secrets are stored as SecretBox sealed them (`v1:…`), never in plain text.
import { defineEntity, p, newId } from '@berth/core';

export const GitProviderRecord = defineEntity({
  name: 'GitProviderRecord',
  tableName: 'git_providers',
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    gitProviderId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    name: p.string(),
    /** github, gitlab, bitbucket, gitea: the git provider (`providers.git.<type>`) that serves it. */
    providerType: p.string().length(32),
    organizationId: p.string().length(32),
    /** Who connected it. */
    userId: p.string().length(32),
    sharedWithOrganization: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type GitProviderRow = InstanceType<typeof GitProviderRecord.class>;

export const GithubRecord = defineEntity({
  name: 'GithubRecord',
  tableName: 'github_providers',
  properties: {
    githubId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    gitProviderId: p.string().length(32).unique(),
    githubAppName: p.text().nullable(),
    githubAppId: p.integer().nullable(),
    githubClientId: p.text().nullable(),
    /** Sealed. */
    githubClientSecret: p.text().nullable(),
    githubInstallationId: p.string().nullable(),
    /** Sealed: the App's private key (PEM). */
    githubPrivateKey: p.text().nullable(),
    /** Sealed. */
    githubWebhookSecret: p.text().nullable(),
    githubUrl: p.string().default('https://github.com'),
  },
});
export type GithubRow = InstanceType<typeof GithubRecord.class>;

export const GitlabRecord = defineEntity({
  name: 'GitlabRecord',
  tableName: 'gitlab_providers',
  properties: {
    gitlabId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    gitProviderId: p.string().length(32).unique(),
    gitlabUrl: p.string().default('https://gitlab.com'),
    /** Where Berth reaches the server when it differs from what users see. */
    gitlabInternalUrl: p.string().nullable(),
    /** The OAuth application's id. */
    applicationId: p.string().nullable(),
    redirectUri: p.string().nullable(),
    /** Sealed: the OAuth application's secret. */
    secret: p.text().nullable(),
    /** Sealed. */
    accessToken: p.text().nullable(),
    /** Sealed. */
    refreshToken: p.text().nullable(),
    groupName: p.string().nullable(),
    /** Seconds since the epoch (the peer's). */
    expiresAt: p.bigint('number').nullable(),
  },
});
export type GitlabRow = InstanceType<typeof GitlabRecord.class>;

export const BitbucketRecord = defineEntity({
  name: 'BitbucketRecord',
  tableName: 'bitbucket_providers',
  properties: {
    bitbucketId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    gitProviderId: p.string().length(32).unique(),
    bitbucketUsername: p.string().nullable(),
    /** The Atlassian account's e-mail: the API's user name with an API token. */
    bitbucketEmail: p.string().nullable(),
    /** Sealed: an app password (older records; Atlassian is retiring them). */
    appPassword: p.text().nullable(),
    /** Sealed: an API token. */
    apiToken: p.text().nullable(),
    bitbucketWorkspaceName: p.string().nullable(),
  },
});
export type BitbucketRow = InstanceType<typeof BitbucketRecord.class>;

export const GiteaRecord = defineEntity({
  name: 'GiteaRecord',
  tableName: 'gitea_providers',
  properties: {
    giteaId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    gitProviderId: p.string().length(32).unique(),
    giteaUrl: p.string().default('https://gitea.com'),
    /** Where Berth reaches the server when it differs from what users see. */
    giteaInternalUrl: p.string().nullable(),
    redirectUri: p.string().nullable(),
    /** The OAuth application's client id. */
    clientId: p.string().nullable(),
    /** Sealed: the OAuth application's secret. */
    clientSecret: p.text().nullable(),
    /** Sealed. */
    accessToken: p.text().nullable(),
    /** Sealed. */
    refreshToken: p.text().nullable(),
    /** Seconds since the epoch (the peer's). */
    expiresAt: p.bigint('number').nullable(),
    scopes: p.string().nullable(),
    /** Seconds since the epoch: the last testConnection that got through. */
    lastAuthenticatedAt: p.bigint('number').nullable(),
    giteaUsername: p.string().nullable(),
    /** Keeps that owner's repositories in the listings. */
    organizationName: p.string().nullable(),
  },
});
export type GiteaRow = InstanceType<typeof GiteaRecord.class>;

/**
 * A connection of a forge that brings no record of its own (a provider declaring `connection`, one
 * written out of tree): its settings in clear and its secrets, each sealed, as the forge's
 * GitConnectionForm names them.
 */
export const GitConnectionRecord = defineEntity({
  name: 'GitConnectionRecord',
  tableName: 'git_connections',
  properties: {
    connectionId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    gitProviderId: p.string().length(32).unique(),
    settings: p.json<Record<string, string | number | null>>(),
    /** Each value sealed (`v1:…`). */
    secrets: p.json<Record<string, string | null>>(),
  },
});
export type GitConnectionRow = InstanceType<typeof GitConnectionRecord.class>;

export const gitProviderEntities = [GitProviderRecord, GithubRecord, GitlabRecord, BitbucketRecord, GiteaRecord, GitConnectionRecord];
