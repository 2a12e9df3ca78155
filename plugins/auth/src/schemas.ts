import { Type, AuthUserView, schema } from '@berth/core';

const { Nullable, NonEmpty, Email } = schema;

/** What login-like operations answer: a bearer token, or null plus is2FAEnabled when a TOTP is due. */
export const SignedIn = Type.Object({
  token: Nullable(Type.String({ description: 'Bearer token; null while the two-factor step is due' })),
  is2FAEnabled: Type.Boolean(),
  id: Type.String({ description: 'The user id (verifyLogin2FA takes it)' }),
  organizationId: Nullable(Type.String()),
  user: AuthUserView,
});

/** auth.createAdmin: the credentials, and the setup token a caller off this machine needs while no admin exists. */
export const CreateAdminInput = () =>
  Type.Object({
    ...Credentials.properties,
    setupToken: Type.Optional(Type.String({ maxLength: 128, description: "The one-time token in the file setup-token of Berth's data directory; not needed from this machine's loopback" })),
  });
export const Credentials = Type.Object({ email: Email(), password: Type.String({ minLength: 8, maxLength: 1024 }) });

export const CreateUserInput = Type.Object({
  password: Type.String({ minLength: 8, maxLength: 1024 }),
  id: Type.String({ description: 'The invitation id' }),
  token: NonEmpty({ description: 'The invitation token' }),
});

const optionalAccountFields = {
  id: Type.Optional(Type.String()),
  rol: Type.Optional(Type.Enum(['admin', 'user'])),
  image: Type.Optional(Nullable(schema.Column())),
  secret: Type.Optional(Nullable(Type.String())),
  token: Type.Optional(Nullable(Type.String())),
  is2FAEnabled: Type.Optional(Type.Boolean()),
  createdAt: Type.Optional(Type.String()),
};

export const UpdateInput = Type.Object({
  email: Nullable(Email()),
  password: Nullable(Type.String({ maxLength: 1024 })),
  currentPassword: Type.Optional(Nullable(Type.String({ maxLength: 1024, description: 'Required with password' }))),
  ...optionalAccountFields,
});

export const UpdateByAdminInput = Type.Object({ ...optionalAccountFields, id: NonEmpty(), email: Nullable(Email()), password: Nullable(Type.String({ maxLength: 1024 })) });

export const TwoFactorSecret = Type.Object({
  secret: Type.String({ description: 'base32 TOTP secret' }),
  uri: Type.String({ description: 'otpauth:// URI for authenticator apps' }),
  qrCodeUrl: Type.String({ description: "the same otpauth:// URI, under the peer's field name" }),
});

export const Pin = Type.String({ minLength: 6, maxLength: 10, pattern: '^[0-9 ]+$' });
