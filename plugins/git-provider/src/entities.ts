// A connected git hosting account: one git_providers row (what every forge shares: name, type,
// owner, sharing) and one git_connections row (the forge's own: its settings and sealed secrets as
// its provider's connection form declares them). Secrets are stored as SecretBox sealed them
// (`v1:…`), never in plain text.
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
    /** The forge (`providers.git.<type>`: github, gitlab, bitbucket, gitea…) that serves it. */
    providerType: p.string().length(32),
    organizationId: p.string().length(32),
    /** Who connected it. */
    userId: p.string().length(32),
    sharedWithOrganization: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type GitProviderRow = InstanceType<typeof GitProviderRecord.class>;

/** A connection of a forge: its settings in clear and its secrets, each sealed, as the forge's GitConnectionForm names them. */
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

export const gitProviderEntities = [GitProviderRecord, GitConnectionRecord];
