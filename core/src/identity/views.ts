// What the API shows of identity records: one TypeBox schema each, shared by the auth,
// user and organization plugins, with the mapping from the stored entity.
import Type, { type Static } from 'typebox';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const Iso = () => Type.String({ format: 'date-time' });

export const UserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  firstName: Type.String(),
  lastName: Type.String(),
  image: Nullable(Type.String()),
  twoFactorEnabled: Type.Boolean(),
  createdAt: Iso(),
  updatedAt: Iso(),
});
export type UserView = Static<typeof UserView>;

export const MemberView = Type.Object({
  id: Type.String({ description: 'membership id' }),
  userId: Type.String(),
  organizationId: Type.String(),
  role: Type.Enum(['owner', 'admin', 'member']),
  createdAt: Iso(),
  user: UserView,
});
export type MemberView = Static<typeof MemberView>;

/** The older variant's account record ("auth"): role as `rol`, `admin | user`. */
export const AuthUserView = Type.Object({
  id: Type.String(),
  userId: Type.String(),
  email: Type.String(),
  rol: Type.Enum(['admin', 'user']),
  image: Nullable(Type.String()),
  secret: Type.Null({ description: 'never disclosed' }),
  token: Type.Null({ description: 'never disclosed' }),
  is2FAEnabled: Type.Boolean(),
  organizationId: Nullable(Type.String()),
  createdAt: Iso(),
});
export type AuthUserView = Static<typeof AuthUserView>;

export const OrganizationView = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  name: Type.String(),
  slug: Nullable(Type.String()),
  logo: Nullable(Type.String()),
  ownerId: Type.String(),
  createdAt: Iso(),
  metadata: Nullable(Type.String({ description: 'the peer\'s free-form metadata (not kept: null)' })),
  defaultRole: Nullable(Type.String({ description: 'the peer\'s default role of new members (not kept: null)' })),
});
export type OrganizationView = Static<typeof OrganizationView>;

export const ApiKeyView = Type.Object({
  id: Type.String(),
  apiKeyId: Type.String(),
  name: Type.String(),
  prefix: Nullable(Type.String()),
  start: Type.String(),
  userId: Type.String(),
  organizationId: Type.String(),
  metadata: Nullable(Type.Record(Type.String(), Type.Unknown())),
  expiresAt: Nullable(Iso()),
  lastUsedAt: Nullable(Iso()),
  createdAt: Iso(),
});
export type ApiKeyView = Static<typeof ApiKeyView>;

export const InvitationView = Type.Object({
  id: Type.String(),
  invitationId: Type.String(),
  organizationId: Type.String(),
  email: Type.String(),
  role: Type.Enum(['admin', 'member']),
  status: Type.Enum(['pending', 'accepted', 'canceled']),
  expiresAt: Iso(),
  createdAt: Iso(),
});
export type InvitationView = Static<typeof InvitationView>;

export const iso = (d: Date | string | null | undefined): string | null =>
  d == null ? null : (d instanceof Date ? d.toISOString() : new Date(d).toISOString());
