// scim.* — the organization's SCIM providers, as the peer's: a provider id names the identity
// provider, generateToken answers the bearer token it provisions with (shown once, stored hashed;
// for a provider that has one, a new token replaces it), listProviders names them, deleteProvider
// takes one and its token away. The organization's admins and owner only (the peer: its
// enterprise procedures, owner and admin).
import { Type, router } from '@berth/core';
import { GeneratedToken, ProviderInput, ProviderView, Success } from './schemas.ts';

const scim = router('scim', 'organization');

export const scimProcedures = [
  scim.query('listProviders', {
    access: 'admin',
    permission: 'organization.update',
    summary: "The organization's SCIM providers, by providerId: {id, providerId, organizationId} each (never a token)",
    input: Type.Object({}),
    output: Type.Array(ProviderView),
    handler: (_input, ctx) => ctx.cradle.scimProviders.list(ctx.principal.organizationId, ctx.cradle.em),
  }),
  scim.mutation('generateToken', {
    access: 'admin',
    permission: 'organization.update',
    summary:
      "A bearer token for the organization's SCIM provider providerId, which its identity provider sends to /scim/v2 (Authorization: Bearer): shown once, stored hashed. A provider that has a token gets a new one, and the old one is refused at once",
    input: ProviderInput,
    output: GeneratedToken,
    handler: ({ providerId }, ctx) => ctx.cradle.scimProviders.generateToken(ctx.principal.organizationId, providerId, ctx.cradle.em),
  }),
  scim.mutation('deleteProvider', {
    access: 'admin',
    permission: 'organization.update',
    summary: "Removes the organization's SCIM provider providerId: its token is refused at once (the users it provisioned stay)",
    input: ProviderInput,
    output: Success,
    handler: ({ providerId }, ctx) => ctx.cradle.scimProviders.remove(ctx.principal.organizationId, providerId, ctx.cradle.em).then(() => ({ success: true })),
  }),
];
