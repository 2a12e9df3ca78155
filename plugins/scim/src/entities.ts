// An organization's SCIM providers (the peer's scim_provider: one bearer token each, stored as its
// SHA-256 hash) and what SCIM keeps of each user it provisions: the identity provider's externalId
// and whether the user is active (a deprovisioned user stays listed, inactive, until deleted).
import { columns, defineEntity, p } from '@berth/core';

export const ScimProvider = defineEntity({
  name: 'ScimProvider',
  tableName: 'scim_providers',
  uniques: [{ properties: ['organizationId', 'providerId'] }],
  properties: {
    id: columns.primaryId(),
    /** The name the organization gave the identity provider (lowercase, digits and dashes). */
    providerId: p.string().length(64),
    organizationId: columns.berthId().index(),
    /** SHA-256 of the bearer token; the token itself is shown once. */
    tokenHash: p.string().length(64).unique().hidden(),
    createdAt: columns.createdAt(),
  },
});

export const ScimUser = defineEntity({
  name: 'ScimUser',
  tableName: 'scim_users',
  uniques: [{ properties: ['organizationId', 'userId'] }],
  properties: {
    id: columns.primaryId(),
    organizationId: columns.berthId().index(),
    userId: columns.berthId().index(),
    /** The identity provider's own id of the user, as it sent it. */
    externalId: p.string().length(255).nullable(),
    /** false: deprovisioned (no membership; listed as inactive until deleted). */
    active: p.boolean(),
    createdAt: columns.createdAt(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export const scimEntities = [ScimProvider, ScimUser];
