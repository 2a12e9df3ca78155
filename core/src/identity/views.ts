// What the API shows of the kernel's identity records: an account as the older variant shows it
// (what a login answers) and an API key. The user and organization plugins define the others.
import Type, { type Static } from 'typebox';
import { Nullable, Timestamp as Iso } from '../schema.ts';

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

export const iso = (d: Date | string | null | undefined): string | null => (d == null ? null : d instanceof Date ? d.toISOString() : new Date(d).toISOString());
