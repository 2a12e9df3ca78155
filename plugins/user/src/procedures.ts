// user.* — the current variant's account operations.
import { Type, ApiKeyView, router, forbidden, optionalService, schema, type Cradle, type ProcedureContext } from '@berth/core';
import { MemberView, UserView } from './views.ts';
import { CreateApiKeyInput, CreatedApiKey, peerApiKeyRow, CreateUserInput, UpdateUserInput } from './schemas.ts';
import { bookmarkedTemplates, toggleBookmark } from './bookmarks.ts';

const user = router('user', 'organization');
const None = Type.Object({});
/** An API key as user.get lists it with its account (never the key itself). */
const ListedApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: ApiKeyView.properties.prefix,
  enabled: Type.Boolean(),
  expiresAt: ApiKeyView.properties.expiresAt,
  createdAt: ApiKeyView.properties.createdAt,
});
/** user.get: the membership, its account and the account's API keys, as the peer answers it. */
const CallerView = Type.Object({ ...MemberView.properties, user: Type.Object({ ...UserView.properties, apiKeys: Type.Array(ListedApiKey) }) });

/** The caller's API keys as the peer lists them with its account: a listed key is an enabled one. */
async function listedKeys(ctx: ProcedureContext) {
  const keys = await ctx.cradle.apiKeys.listApiKeys(ctx.principal.userId);
  return keys.map(k => ({ id: k.id, name: k.name, prefix: k.prefix, enabled: true, expiresAt: k.expiresAt, createdAt: k.createdAt }));
}

export const userProcedures = [
  user.query('get', {
    permission: 'member',
    summary: 'The caller: its membership in the active organization (organizationId, role) and its account with its API keys (never the keys themselves)',
    input: None,
    output: CallerView,
    async handler(_i, ctx) {
      const member = await ctx.cradle.users.member(ctx.principal.userId, ctx.principal.organizationId);
      return { ...member, user: { ...member.user, apiKeys: await listedKeys(ctx) } };
    },
  }),
  user.query('one', {
    permission: 'member',
    summary: "A member of the caller's organization",
    input: Type.Object({ userId: Type.String() }),
    output: MemberView,
    handler: ({ userId }, ctx) => ctx.cradle.users.member(userId, ctx.principal.organizationId),
  }),
  user.query('all', {
    permission: 'member.read',
    summary: "Every member of the caller's organization",
    input: None,
    output: Type.Array(MemberView),
    handler: (_i, ctx) => ctx.cradle.users.members(ctx.principal.organizationId),
  }),
  user.query('session', {
    scope: 'public',
    summary: "The caller's session as the peer answers it: its user's id and the organization it acts in; null without credentials (or with expired ones)",
    input: None,
    output: schema.Nullable(Type.Object({ user: Type.Object({ id: Type.String() }), session: Type.Object({ activeOrganizationId: Type.String() }) })),
    handler: (_i, ctx) => {
      const caller = ctx.maybePrincipal;
      return caller ? { user: { id: caller.userId }, session: { activeOrganizationId: caller.organizationId } } : null;
    },
  }),
  user.query('checkUserOrganizations', {
    permission: 'member',
    summary: "How many organizations a user belongs to: the caller's own count, or (owners and admins) a member's of the caller's organization",
    input: Type.Object({ userId: schema.NonEmpty({ maxLength: 64 }) }),
    output: Type.Integer({ minimum: 0 }),
    handler: ({ userId }, ctx) => ctx.cradle.users.organizationCount(userId, ctx.principal),
  }),
  user.query('getServerMetrics', {
    permission: 'monitoring.read',
    summary: "The caller's account, as the peer answers this procedure (its monitoring page reads the user); the figures are server.getServerMetrics'",
    input: None,
    output: UserView,
    handler: async (_i, ctx) => (await ctx.cradle.users.member(ctx.principal.userId, ctx.principal.organizationId)).user,
  }),
  user.query('getBookmarkedTemplates', {
    permission: 'member',
    summary: 'The template ids the caller bookmarked (its own, in every organization), in the order bookmarked',
    input: None,
    output: Type.Array(Type.String()),
    handler: (_i, ctx) => bookmarkedTemplates(ctx.cradle.em, ctx.principal.userId),
  }),
  user.mutation('toggleTemplateBookmark', {
    permission: 'member',
    summary: 'Bookmark a template of the catalog, or take its bookmark away; answers whether it is bookmarked now',
    input: Type.Object({ templateId: schema.NonEmpty({ maxLength: 255, description: "a template's id in the catalog (compose.templates)" }) }),
    output: Type.Object({ isBookmarked: Type.Boolean() }),
    handler: ({ templateId }, ctx) => toggleBookmark(ctx.cradle.em, ctx.principal.userId, templateId),
  }),
  user.query('haveRootAccess', {
    permission: 'member',
    summary: 'true when the caller owns its organization',
    input: None,
    output: Type.Boolean(),
    handler: (_i, ctx) => ctx.principal.role === 'owner',
  }),
  user.mutation('update', {
    permission: 'member',
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
    permission: 'organization.update',
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
    permission: 'member.create',
    summary: "Create an account with a password in the caller's organization; answers its userId, email and role, as the peer does",
    input: CreateUserInput,
    output: Type.Object({ userId: Type.String(), email: Type.String(), role: Type.String() }),
    async handler(input, ctx) {
      const member = await ctx.cradle.users.createUser({ ...input, organizationId: ctx.principal.organizationId });
      return { userId: member.userId, email: member.user.email, role: member.role };
    },
  }),
  user.mutation('createApiKey', {
    permission: 'member',
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
    permission: 'member',
    summary: "The caller's API keys (never the keys themselves)",
    input: None,
    output: Type.Array(ApiKeyView),
    handler: (_i, ctx) => ctx.cradle.apiKeys.listApiKeys(ctx.principal.userId),
  }),
  user.mutation('deleteApiKey', {
    permission: 'member',
    summary: "Revoke one of the caller's API keys",
    input: Type.Object({ apiKeyId: Type.String() }),
    output: Type.Boolean(),
    async handler({ apiKeyId }, ctx) {
      await ctx.cradle.apiKeys.deleteApiKey(ctx.principal, apiKeyId);
      return true;
    },
  }),
  user.mutation('generateToken', {
    permission: 'member',
    summary: 'Issue a long-lived bearer token for the caller',
    input: None,
    output: Type.Object({ token: Type.String() }),
    handler: async (_i, ctx) => ({ token: await ctx.cradle.sessions.generateToken(ctx.principal) }),
  }),
];

/**
 * user.getBackups: the caller's account with its API keys (never the keys themselves) and the
 * organization's web-server backups (Berth's own data; the backups plugin's, none when it is
 * disabled), each with its destination and runs, as the peer's web-server backups page reads them.
 * Made once every plugin is set up: a backup's schema names every kind's id field.
 */
export const userBackupProcedures = (cradle: () => Cradle) => () => {
  const backups = optionalService(cradle(), 'webServerBackups');
  const backup = backups?.viewSchema() ?? Type.Object({ backupId: Type.String() }, { description: 'the backups plugin is disabled: never listed' });
  return [
    user.query('getBackups', {
      permission: 'organization.update',
      access: 'admin',
      summary: "The caller's account with its API keys and the organization's web-server backups (Berth's own data), each with its destination and runs",
      input: None,
      output: Type.Object({ ...UserView.properties, apiKeys: Type.Array(ListedApiKey), backups: Type.Array(backup, { description: "the organization's web-server backups, oldest first" }) }),
      async handler(_i, ctx) {
        const member = await ctx.cradle.users.member(ctx.principal.userId, ctx.principal.organizationId);
        const views = (await optionalService(ctx.cradle, 'webServerBackups')?.views(ctx.principal.organizationId, ctx.cradle.em)) ?? [];
        return { ...member.user, apiKeys: await listedKeys(ctx), backups: views };
      },
    }),
  ];
};
