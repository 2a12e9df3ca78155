// settings.saveSSHPrivateKey and settings.cleanSSHPrivateKey (admins, as the peer): the caller's
// organization's default SSH key, which its servers without a key of their own (sshKeyId null)
// connect with. Never answered back.
import { Type, router } from '@berth/core';

const settings = router('settings', 'organization');

export const hostsProcedures = [
  settings.mutation('saveSSHPrivateKey', {
    permission: 'organization.update',
    access: 'admin',
    summary: "Save the organization's default SSH private key (kept encrypted, never answered): its servers whose sshKeyId is null connect with it; null removes it",
    input: Type.Object({
      sshPrivateKey: Type.Union([Type.String({ maxLength: 16_384, description: 'a PEM (PKCS#8, PKCS#1) or OpenSSH private key without passphrase' }), Type.Null()], {
        description: "the key; null removes the saved one (the older variant's way), as cleanSSHPrivateKey does",
      }),
    }),
    output: Type.Boolean(),
    handler: async ({ sshPrivateKey }, ctx) => {
      const { hosts, em } = ctx.cradle;
      if (sshPrivateKey === null) await hosts.defaultKeys.clean(ctx.principal.organizationId, em);
      else await hosts.defaultKeys.save(ctx.principal.organizationId, sshPrivateKey, em);
      return true;
    },
  }),
  settings.mutation('cleanSSHPrivateKey', {
    permission: 'organization.update',
    access: 'admin',
    summary: "Remove the organization's default SSH key: its servers without a key of their own then fail, asking for one to be attached",
    input: Type.Object({}),
    output: Type.Boolean(),
    handler: async (_input, ctx) => {
      await ctx.cradle.hosts.defaultKeys.clean(ctx.principal.organizationId, ctx.cradle.em);
      return true;
    },
  }),
];
