// Accounts, organizations and credentials. Authentication is the kernel's job, so these
// tables belong to core; the auth, user and organization plugins expose them as API.
import { defineEntity, p } from '@mikro-orm/core';
import { berthId, createdAt, primaryId } from '../columns.ts';

export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: primaryId(),
    email: p.string().unique(),
    passwordHash: p.string().nullable().hidden(),
    firstName: p.string().default(''),
    lastName: p.string().default(''),
    image: p.string().nullable(),
    /** TOTP secret, sealed with the SecretBox. */
    twoFactorSecret: p.text().nullable().hidden(),
    twoFactorEnabled: p.boolean().default(false),
    /** The TOTP time step of the last accepted login code: a code is good once. */
    twoFactorLastStep: p.bigint('number').nullable().hidden(),
    /** SHA-256 hashes of the unused recovery codes (JSON array), or null. */
    twoFactorRecovery: p.text().nullable().hidden(),
    defaultOrganizationId: berthId().nullable(),
    createdAt: createdAt(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export const Organization = defineEntity({
  name: 'Organization',
  tableName: 'organizations',
  properties: { id: primaryId(), name: p.string(), slug: p.string().nullable(), logo: p.string().nullable(), ownerId: berthId(), createdAt: createdAt() },
});

export const Member = defineEntity({
  name: 'Member',
  tableName: 'members',
  uniques: [{ properties: ['userId', 'organizationId'] }],
  properties: {
    id: primaryId(),
    userId: berthId().index(),
    organizationId: berthId().index(),
    /** owner, admin, member, or the name of one of the organization's custom roles. */
    role: p.string().length(50),
    /** The peer's per-member switches that are on (core/src/permissions.ts memberSwitches), for the member role. */
    switches: p.json<string[]>().onCreate(() => []),
    /** Every record of the organization (owners, admins, and the members from before roles); else the lists below. */
    allRecords: p.boolean().default(false),
    accessedProjects: p.json<string[]>().onCreate(() => []),
    accessedEnvironments: p.json<string[]>().onCreate(() => []),
    accessedServices: p.json<string[]>().onCreate(() => []),
    accessedGitProviders: p.json<string[]>().onCreate(() => []),
    accessedServers: p.json<string[]>().onCreate(() => []),
    createdAt: createdAt(),
  },
});

/** A custom role of an organization: its name and statement (resource → actions), as the peer's organization_role. */
export const CustomRole = defineEntity({
  name: 'CustomRole',
  tableName: 'custom_roles',
  uniques: [{ properties: ['organizationId', 'role'] }],
  properties: {
    id: primaryId(),
    organizationId: berthId().index(),
    role: p.string().length(50),
    permission: p.json<Record<string, string[]>>(),
    createdAt: createdAt(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

export const Session = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: {
    id: primaryId(),
    tokenHash: p.string().length(64).unique(),
    userId: berthId().index(),
    organizationId: berthId().nullable(),
    /** session: from login; token: long-lived from generateToken; pending2fa: password ok, TOTP still due. */
    kind: p.enum(['session', 'token', 'pending2fa'] as const),
    attempts: p.integer().default(0),
    expiresAt: p.datetime().nullable(),
    createdAt: createdAt(),
  },
});

export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: primaryId(),
    name: p.string().length(32),
    prefix: p.string().nullable(),
    /** The first characters of the key, to recognise it in a list. */
    start: p.string().length(16),
    keyHash: p.string().length(64).unique().hidden(),
    userId: berthId().index(),
    organizationId: berthId(),
    metadata: p.json<Record<string, unknown>>().nullable(),
    expiresAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
    createdAt: createdAt(),
  },
});

export const Invitation = defineEntity({
  name: 'Invitation',
  tableName: 'invitations',
  properties: {
    id: primaryId(),
    organizationId: berthId().index(),
    email: p.string(),
    role: p.enum(['admin', 'member'] as const),
    status: p.enum(['pending', 'accepted', 'canceled'] as const).default('pending'),
    tokenHash: p.string().length(64).hidden(),
    inviterId: berthId(),
    expiresAt: p.datetime(),
    createdAt: createdAt(),
  },
});

export const identityEntities = [User, Organization, Member, CustomRole, Session, ApiKey, Invitation];
