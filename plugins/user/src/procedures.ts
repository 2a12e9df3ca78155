// user.* — the current variant's account operations.
import { Type, ApiKeyView, router, forbidden } from '@berth/core';
import { MemberView, UserView } from './views.ts';
import { CreateApiKeyInput, CreatedApiKey, peerApiKeyRow, CreateUserInput, UpdateUserInput } from './schemas.ts';

const user = router('user', 'organization');
const None = Type.Object({});
/** user.get: the membership, its account and the account's API keys, as the peer answers it. */
const CallerView = Type.Object({
  ...MemberView.properties,
  user: Type.Object({
    ...UserView.properties,
    apiKeys: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        prefix: ApiKeyView.properties.prefix,
        enabled: Type.Boolean(),
        expiresAt: ApiKeyView.properties.expiresAt,
        createdAt: ApiKeyView.properties.createdAt,
      }),
    ),
  }),
});

export const userProcedures = [
  user.query('get', {
    summary: 'The caller: its membership in the active organization (organizationId, role) and its account with its API keys (never the keys themselves)',
    input: None,
    output: CallerView,
    async handler(_i, ctx) {
      const member = await ctx.cradle.users.member(ctx.principal.userId, ctx.principal.organizationId);
      const keys = await ctx.cradle.apiKeys.listApiKeys(ctx.principal.userId);
      // The peer lists the caller's keys with their account; a listed key is an enabled one.
      const apiKeys = keys.map(k => ({ id: k.id, name: k.name, prefix: k.prefix, enabled: true, expiresAt: k.expiresAt, createdAt: k.createdAt }));
      return { ...member, user: { ...member.user, apiKeys } };
    },
  }),
  user.query('one', {
    summary: "A member of the caller's organization",
    input: Type.Object({ userId: Type.String() }),
    output: MemberView,
    handler: ({ userId }, ctx) => ctx.cradle.users.member(userId, ctx.principal.organizationId),
  }),
  user.query('all', {
    summary: "Every member of the caller's organization",
    input: None,
    output: Type.Array(MemberView),
    handler: (_i, ctx) => ctx.cradle.users.members(ctx.principal.organizationId),
  }),
  user.query('haveRootAccess', { summary: 'true when the caller owns its organization', input: None, output: Type.Boolean(), handler: (_i, ctx) => ctx.principal.role === 'owner' }),
  user.mutation('update', {
    summary: "Change the caller's profile (or, for admins, another member's); answers the user, as the peer does",
    input: UpdateUserInput,
    output: UserView,
    async handler(input, ctx) {
      const { users } = ctx.cradle;
      const target = input.id ?? ctx.principal.userId;
      if (target !== ctx.principal.userId && ctx.principal.role === 'member') throw forbidden();
      await users.member(target, ctx.principal.organizationId);
      await users.updateUser(
        target,
        { email: input.email, password: input.password, currentPassword: input.currentPassword, firstName: input.firstName, lastName: input.lastName, image: input.image },
        ctx.principal,
      );
      return (await users.member(target, ctx.principal.organizationId)).user;
    },
  }),
  user.mutation('remove', {
    access: 'admin',
    summary: 'Remove a member from the organization (and the account, when it belongs nowhere else)',
    input: Type.Object({ userId: Type.String() }),
    output: Type.Boolean(),
    async handler({ userId }, ctx) {
      await ctx.cradle.users.removeMember(userId, ctx.principal.organizationId, ctx.principal);
      return true;
    },
  }),
  user.mutation('createUserWithCredentials', {
    access: 'admin',
    summary: "Create an account with a password in the caller's organization; answers its userId, email and role, as the peer does",
    input: CreateUserInput,
    output: Type.Object({ userId: Type.String(), email: Type.String(), role: Type.String() }),
    async handler(input, ctx) {
      const member = await ctx.cradle.users.createUser({ ...input, organizationId: ctx.principal.organizationId });
      return { userId: member.userId, email: member.user.email, role: member.role };
    },
  }),
  user.mutation('createApiKey', {
    summary: "A new API key acting in metadata.organizationId, as the peer's API-key row (no rate limits or quotas: those fields are null); the plain key is in `key`, shown once",
    input: CreateApiKeyInput,
    output: CreatedApiKey,
    handler: async (input, ctx) =>
      peerApiKeyRow(
        await ctx.cradle.apiKeys.createApiKey(ctx.principal, {
          name: input.name,
          prefix: input.prefix,
          expiresIn: input.expiresIn,
          organizationId: input.metadata.organizationId,
          metadata: input.metadata,
        }),
      ),
  }),
  user.query('getApiKeys', {
    summary: "The caller's API keys (never the keys themselves)",
    input: None,
    output: Type.Array(ApiKeyView),
    handler: (_i, ctx) => ctx.cradle.apiKeys.listApiKeys(ctx.principal.userId),
  }),
  user.mutation('deleteApiKey', {
    summary: "Revoke one of the caller's API keys",
    input: Type.Object({ apiKeyId: Type.String() }),
    output: Type.Boolean(),
    async handler({ apiKeyId }, ctx) {
      await ctx.cradle.apiKeys.deleteApiKey(ctx.principal, apiKeyId);
      return true;
    },
  }),
  user.mutation('generateToken', {
    summary: 'Issue a long-lived bearer token for the caller',
    input: None,
    output: Type.Object({ token: Type.String() }),
    handler: async (_i, ctx) => ({ token: await ctx.cradle.sessions.generateToken(ctx.principal) }),
  }),
];
