import { Type, ApiKeyView, schema, type Static } from '@berth/core';

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

const notKept = (what: string) => ({ description: `always null: ${what}` });
/** The new key as the peer's API-key plugin answers its row, with Berth's view of it (apiKeyId, userId, organizationId, lastUsedAt). */
export const CreatedApiKey = Type.Object({
  ...ApiKeyView.properties,
  key: Type.String({ description: 'The key in plain text; shown once' }),
  configId: Type.String({ description: 'always "default": Berth has one kind of API key' }),
  referenceId: Type.String({ description: 'the user the key acts for (the same as userId)' }),
  refillInterval: Nullable(Type.Number(notKept('Berth keys have no request quota to refill (the input field is accepted and ignored)'))),
  refillAmount: Nullable(Type.Number(notKept('no request quota (the input field is accepted and ignored)'))),
  lastRefillAt: Nullable(Type.String(notKept('no request quota'))),
  enabled: Nullable(Type.Boolean({ description: 'always true: a key works until it expires or is deleted' })),
  rateLimitEnabled: Nullable(Type.Boolean({ description: 'always false: Berth does not rate-limit keys (the input fields are accepted and ignored)' })),
  rateLimitTimeWindow: Nullable(Type.Number(notKept('no rate limit'))),
  rateLimitMax: Nullable(Type.Number(notKept('no rate limit'))),
  requestCount: Nullable(Type.Number(notKept("Berth does not count a key's requests"))),
  remaining: Nullable(Type.Number(notKept('no request quota: the key has no limit'))),
  lastRequest: Nullable(Type.String({ description: 'when the key was last used (null until then)' })),
  updatedAt: Type.String({ description: 'a key is never changed: its creation time' }),
  permissions: Nullable(Type.Any(notKept("a key acts with its user's role in its organization"))),
});
export type CreatedApiKey = Static<typeof CreatedApiKey>;

/** A new key in the peer's API-key row, from Berth's view of it. */
export const peerApiKeyRow = (k: ApiKeyView & { key: string }): CreatedApiKey => ({
  ...k,
  configId: 'default',
  referenceId: k.userId,
  refillInterval: null,
  refillAmount: null,
  lastRefillAt: null,
  enabled: true,
  rateLimitEnabled: false,
  rateLimitTimeWindow: null,
  rateLimitMax: null,
  requestCount: null,
  remaining: null,
  lastRequest: k.lastUsedAt,
  updatedAt: k.createdAt,
  permissions: null,
});

export const UpdateUserInput = Type.Object({
  id: Type.Optional(Type.String({ minLength: 1, description: 'Another member (admins only); default the caller' })),
  firstName: Type.Optional(schema.Column()),
  lastName: Type.Optional(schema.Column()),
  email: Type.Optional(Email()),
  image: Type.Optional(Nullable(schema.Column())),
  password: Type.Optional(Type.String({ minLength: 8, maxLength: 1024 })),
  currentPassword: Type.Optional(Type.String({ maxLength: 1024, description: "Required to change one's own password" })),
});

export const CreateUserInput = Type.Object({ email: Email(), password: Type.String({ minLength: 8, maxLength: 1024 }), role: Type.Enum(['admin', 'member']) });
