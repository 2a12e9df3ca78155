import { Type, ApiKeyView, schema } from '@berth/core';

const { Nullable, Email } = schema;

export const CreateApiKeyInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 32 }),
  prefix: Type.Optional(Type.String({ maxLength: 32, pattern: '^[A-Za-z0-9_-]*$' })),
  expiresIn: Type.Optional(Type.Number({ minimum: 1, maximum: 315360000, description: 'seconds until the key expires (at most 10 years)' })),
  metadata: Type.Object({ organizationId: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
  rateLimitEnabled: Type.Optional(Type.Boolean()),
  rateLimitTimeWindow: Type.Optional(Type.Number()),
  rateLimitMax: Type.Optional(Type.Number()),
  remaining: Type.Optional(Type.Number()),
  refillAmount: Type.Optional(Type.Number()),
  refillInterval: Type.Optional(Type.Number()),
});

export const CreatedApiKey = Type.Intersect([ApiKeyView, Type.Object({ key: Type.String({ description: 'The key in plain text; shown once' }) })]);

export const UpdateUserInput = Type.Object({
  id: Type.Optional(Type.String({ minLength: 1, description: 'Another member (admins only); default the caller' })),
  firstName: Type.Optional(schema.Column()),
  lastName: Type.Optional(schema.Column()),
  email: Type.Optional(Email()),
  image: Type.Optional(Nullable(schema.Column())),
  password: Type.Optional(Type.String({ minLength: 8, maxLength: 1024 })),
  currentPassword: Type.Optional(Type.String({ maxLength: 1024, description: 'Required to change one\'s own password' })),
});

export const CreateUserInput = Type.Object({
  email: Email(),
  password: Type.String({ minLength: 8, maxLength: 1024 }),
  role: Type.Enum(['admin', 'member']),
});
