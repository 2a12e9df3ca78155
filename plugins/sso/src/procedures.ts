// sso.* — an organization's single sign-on: its OIDC and SAML providers, the origins a sign-in may
// return to, and enforcement (settings.updateEnforceSSO). Its admins manage them; whether to show a
// "sign in with SSO" button and whether SSO is enforced is public (the sign-in page asks).
import { Type, router } from '@berth/core';
import { SsoProvider } from './entities.ts';
import { Origin, ProviderInput, ProviderRef, ProviderView, Success } from './schemas.ts';
import { originOf } from './service.ts';

const sso = router('sso', 'organization');
const done = (change: Promise<void>) => change.then(() => ({ success: true }));

export const ssoProcedures = [
  sso.query('showSignInWithSSO', {
    scope: 'public',
    summary: 'Whether the sign-in page offers "sign in with SSO": true once any organization of the instance has a provider. No credential needed',
    input: Type.Object({}),
    output: Type.Boolean(),
    handler: async (_input, ctx) => (await ctx.cradle.em.count(SsoProvider, {})) > 0,
  }),
  sso.query('enforceSSO', {
    scope: 'public',
    summary: "Whether password login is refused for the caller's organization (without a credential: the instance's organization). No credential needed",
    input: Type.Object({}),
    output: Type.Boolean(),
    handler: (_input, ctx) => ctx.cradle.ssoAdmin.enforced(),
  }),
  sso.query('listProviders', {
    access: 'admin',
    permission: 'organization.update',
    summary: "The organization's SSO providers, oldest first; their configuration as JSON text with the secrets masked",
    input: Type.Object({}),
    output: Type.Array(ProviderView),
    handler: (_input, ctx) => ctx.cradle.ssoAdmin.list(),
  }),
  sso.query('one', {
    access: 'admin',
    permission: 'organization.update',
    summary: "One of the organization's SSO providers, by providerId",
    input: ProviderRef,
    output: ProviderView,
    handler: ({ providerId }, ctx) => ctx.cradle.ssoAdmin.one(providerId),
  }),
  sso.mutation('register', {
    access: 'admin',
    permission: 'organization.update',
    summary:
      'Register an OIDC (oidcConfig) or SAML 2.0 (samlConfig) provider for the organization: its users sign in at /api/sso/<providerId>/sign-in. A domain belongs to one provider of the instance; secrets are stored sealed',
    input: ProviderInput,
    output: Success,
    handler: (input, ctx) => done(ctx.cradle.ssoAdmin.register(input)),
  }),
  sso.mutation('update', {
    access: 'admin',
    permission: 'organization.update',
    summary: 'Change a provider (a masked secret sent back keeps the stored one); a new issuer must be among the trusted origins',
    input: ProviderInput,
    output: Success,
    handler: (input, ctx) => done(ctx.cradle.ssoAdmin.update(input)),
  }),
  sso.mutation('deleteProvider', {
    access: 'admin',
    permission: 'organization.update',
    summary: 'Delete one of the organization’s providers',
    input: ProviderRef,
    output: Success,
    handler: ({ providerId }, ctx) => done(ctx.cradle.ssoAdmin.remove(providerId)),
  }),
  sso.query('getTrustedOrigins', {
    access: 'admin',
    permission: 'organization.update',
    summary: 'The origins a sign-in of the organization may send its caller back to (callbackURL)',
    input: Type.Object({}),
    output: Type.Array(Type.String()),
    handler: (_input, ctx) => ctx.cradle.ssoAdmin.trustedOrigins(),
  }),
  sso.mutation('addTrustedOrigin', {
    access: 'admin',
    permission: 'organization.update',
    summary: 'Trust an origin (http or https) as a sign-in’s callbackURL; adding one already there changes nothing',
    input: Type.Object({ origin: Origin }),
    output: Success,
    handler: ({ origin }, ctx) => done(ctx.cradle.ssoAdmin.changeOrigins(list => [...list, originOf(origin, 'origin')])),
  }),
  sso.mutation('removeTrustedOrigin', {
    access: 'admin',
    permission: 'organization.update',
    summary: 'Stop trusting an origin',
    input: Type.Object({ origin: Origin }),
    output: Success,
    handler: ({ origin }, ctx) => done(ctx.cradle.ssoAdmin.changeOrigins(list => list.filter(o => o !== originOf(origin, 'origin')))),
  }),
  sso.mutation('updateTrustedOrigin', {
    access: 'admin',
    permission: 'organization.update',
    summary: 'Replace a trusted origin by another',
    input: Type.Object({ oldOrigin: Origin, newOrigin: Origin }),
    output: Success,
    handler: ({ oldOrigin, newOrigin }, ctx) => {
      const from = originOf(oldOrigin, 'oldOrigin');
      const to = originOf(newOrigin, 'newOrigin');
      return done(ctx.cradle.ssoAdmin.changeOrigins(list => list.map(o => (o === from ? to : o))));
    },
  }),
  router('settings', 'organization').mutation('updateEnforceSSO', {
    access: 'admin',
    permission: 'organization.update',
    summary: "Refuse (true) or allow again (false) password login for the organization's members; the instance owner keeps hers (break-glass). Needs a provider first",
    input: Type.Object({ enforceSSO: Type.Boolean() }),
    output: Type.Boolean(),
    handler: ({ enforceSSO }, ctx) => ctx.cradle.ssoAdmin.setEnforced(enforceSSO).then(() => true),
  }),
];
