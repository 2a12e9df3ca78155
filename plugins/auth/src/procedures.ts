// auth.* — the older variant's account operations (bearer tokens, roles admin | user, 2FA).
import { Type, AuthUserView, router, unauthorized, forbidden, isLocalCaller, isSetupToken, removeSetupToken, type ProcedureContext } from '@berth/core';
import { CreateAdminInput, Credentials, CreateUserInput, Pin, SignedIn, TwoFactorSecret, UpdateByAdminInput, UpdateInput } from './schemas.ts';

const auth = router('auth', 'organization');
const None = Type.Object({});
/** How young a login must be to turn two-factor off. */
const RECENT_LOGIN_MS = 10 * 60 * 1000;
/** 403 unless the call comes with a session opened by a login of the last 10 minutes. */
async function assertRecentLogin(ctx: ProcedureContext, what: string): Promise<void> {
  const age = await ctx.cradle.sessions.loginAge(ctx.principal);
  if (age === null || age > RECENT_LOGIN_MS) throw forbidden(`${what} needs a recent login: log in again (password and code) and call it with that session within 10 minutes`);
}
const me = (ctx: ProcedureContext) => ctx.cradle.users.authUser(ctx.principal.userId, ctx.principal.organizationId);

export const authProcedures = [
  auth.mutation('createAdmin', {
    scope: 'public',
    summary: 'Create the first admin (while none exists: from this machine, or with the setup token of the data directory; afterwards an admin adds further admins)',
    input: CreateAdminInput(),
    output: SignedIn,
    async handler({ email, password, setupToken }, ctx) {
      const { accounts, users, config } = ctx.cradle;
      if (!(await accounts.ownerExists())) {
        if (!isLocalCaller(ctx.remote) && !isSetupToken(config.dataDir, setupToken)) {
          throw unauthorized("No admin exists yet: from another machine (or through a proxy), give setupToken, the one-time token in the file setup-token of Berth's data directory");
        }
        const signed = await users.createFirstAdmin(email, password);
        removeSetupToken(config.dataDir);
        return signed;
      }
      const caller = ctx.maybePrincipal;
      if (!caller) throw unauthorized('An admin already exists: sign in as an admin to add another');
      if (caller.role === 'member') throw forbidden();
      const member = await users.createUser({ email, password, role: 'admin', organizationId: caller.organizationId });
      return { token: null, is2FAEnabled: false, id: member.userId, organizationId: caller.organizationId, user: await users.authUser(member.userId, caller.organizationId) };
    },
  }),
  auth.mutation('createUser', {
    scope: 'public',
    summary: 'Accept an invitation: set the password of the invited account',
    input: CreateUserInput,
    output: SignedIn,
    handler: ({ id, token, password }, ctx) => ctx.cradle.users.acceptInvitation(id, token, password),
  }),
  auth.mutation('login', {
    scope: 'public',
    summary: 'Log in with e-mail and password; answers a bearer token, or is2FAEnabled and a null token when a TOTP is due',
    input: Credentials,
    output: SignedIn,
    handler: ({ email, password }, ctx) => ctx.cradle.sessions.login(email, password, ctx.remote.address),
  }),
  auth.query('get', { permission: 'member', summary: 'The caller', input: None, output: AuthUserView, handler: (_i, ctx) => me(ctx) }),
  auth.mutation('logout', {
    permission: 'member',
    summary: 'Revoke the bearer token of this call',
    input: None,
    output: Type.Boolean(),
    async handler(_i, ctx) {
      await ctx.cradle.sessions.logout(ctx.principal);
      return true;
    },
  }),
  auth.mutation('update', {
    permission: 'member',
    summary: "Change the caller's e-mail, password or image",
    input: UpdateInput,
    output: AuthUserView,
    async handler(input, ctx) {
      await ctx.cradle.users.updateUser(ctx.principal.userId, { email: input.email, password: input.password, currentPassword: input.currentPassword, image: input.image });
      return me(ctx);
    },
  }),
  auth.mutation('generateToken', {
    permission: 'member',
    summary: 'Issue a long-lived bearer token',
    input: None,
    output: Type.Object({ token: Type.String() }),
    handler: async (_i, ctx) => ({ token: await ctx.cradle.sessions.generateToken(ctx.principal) }),
  }),
  auth.query('one', {
    permission: 'member',
    summary: "A user of the caller's organization",
    input: Type.Object({ id: Type.String() }),
    output: AuthUserView,
    async handler({ id }, ctx) {
      await ctx.cradle.users.member(id, ctx.principal.organizationId); // NOT_FOUND outside the organization
      return ctx.cradle.users.authUser(id, ctx.principal.organizationId);
    },
  }),
  auth.mutation('updateByAdmin', {
    permission: 'member.update',
    summary: "An admin changes another user's e-mail, password or role",
    input: UpdateByAdminInput,
    output: AuthUserView,
    async handler(input, ctx) {
      const { users } = ctx.cradle;
      const orgId = ctx.principal.organizationId;
      await users.member(input.id, orgId);
      await users.updateUser(input.id, { email: input.email, password: input.password, image: input.image }, ctx.principal);
      if (input.rol) await users.setRole(input.id, orgId, input.rol === 'admin' ? 'admin' : 'member');
      return users.authUser(input.id, orgId);
    },
  }),
  auth.query('generate2FASecret', {
    permission: 'member',
    summary: 'A new TOTP secret for the caller (enabled by verify2FASetup)',
    input: None,
    output: TwoFactorSecret,
    async handler(_i, ctx) {
      const user = await me(ctx);
      return ctx.cradle.twoFactor.generate2FASecret(ctx.principal, user.email);
    },
  }),
  auth.mutation('verify2FASetup', {
    permission: 'member',
    summary: 'Turn on two-factor login with a secret and a current code from it',
    input: Type.Object({ pin: Pin, secret: Type.String({ minLength: 1 }) }),
    output: AuthUserView,
    async handler({ pin, secret }, ctx) {
      await ctx.cradle.twoFactor.verify2FASetup(ctx.principal.userId, secret, pin);
      return me(ctx);
    },
  }),
  auth.mutation('verifyLogin2FA', {
    scope: 'public',
    summary: 'Second step of a login with two-factor on: the id that login answered (a token of that login, valid 5 minutes) and a current code',
    input: Type.Object({ pin: Pin, id: Type.String({ maxLength: 256 }) }),
    output: SignedIn,
    handler: ({ pin, id }, ctx) => ctx.cradle.sessions.verifyLogin2FA(id, pin, ctx.remote.address),
  }),
  auth.mutation('disable2FA', {
    permission: 'member',
    summary: 'Turn off two-factor login for the caller (with a session opened by a login of the last 10 minutes)',
    input: None,
    output: AuthUserView,
    async handler(_i, ctx) {
      await assertRecentLogin(ctx, 'Turning two-factor login off');
      await ctx.cradle.twoFactor.disable2FA(ctx.principal.userId);
      return me(ctx);
    },
  }),
  auth.mutation('generateRecoveryCodes', {
    permission: 'member',
    summary: 'Ten one-time recovery codes for two-factor login (each replaces a code once in verifyLogin2FA); earlier ones stop working. Needs a login of the last 10 minutes',
    input: None,
    output: Type.Object({ recoveryCodes: Type.Array(Type.String()) }),
    async handler(_i, ctx) {
      await assertRecentLogin(ctx, 'Making recovery codes');
      return { recoveryCodes: await ctx.cradle.twoFactor.generateRecoveryCodes(ctx.principal.userId) };
    },
  }),
  auth.mutation('verifyToken', { permission: 'member', summary: 'true when the credential of this call is valid (401 otherwise)', input: None, output: Type.Boolean(), handler: () => true }),
];
