// sshKey.* — SSH keys of the caller's organization. Only generate answers a private key.
import { Type, router, type ProcedureContext } from '@berth/core';
import type { SshKeyService } from './service.ts';
import { CreateInput, GenerateInput, GeneratedKeyPair, SshKeyIdInput, SshKeyView, UpdateInput } from './schemas.ts';

const sshKey = router('sshKey');
const scope = (ctx: ProcedureContext) => ({ organizationId: ctx.principal.organizationId, em: ctx.cradle.em });

export const sshKeyProcedures = (keys: SshKeyService) => [
  sshKey.mutation('create', {
    access: 'admin',
    summary: 'Store a key pair (the public and private keys must match); the private key is kept encrypted and never answered',
    input: CreateInput,
    output: SshKeyView,
    handler(input, ctx) {
      const { organizationId, em } = scope(ctx);
      return keys.create(input, organizationId, em);
    },
  }),
  sshKey.query('one', {
    summary: 'A key of the organization, without its private key',
    input: SshKeyIdInput,
    output: SshKeyView,
    handler({ sshKeyId }, ctx) {
      const { organizationId, em } = scope(ctx);
      return keys.one(sshKeyId, organizationId, em);
    },
  }),
  sshKey.query('all', {
    summary: 'Every key of the organization, newest first, without private keys',
    input: Type.Object({}),
    output: Type.Array(SshKeyView),
    handler(_input, ctx) {
      const { organizationId, em } = scope(ctx);
      return keys.all(organizationId, em);
    },
  }),
  sshKey.mutation('update', {
    summary: 'Change a key\'s name, description or last-used time (the key material cannot change)',
    input: UpdateInput,
    output: SshKeyView,
    handler(input, ctx) {
      const { organizationId, em } = scope(ctx);
      return keys.update(input, organizationId, em);
    },
  }),
  sshKey.mutation('remove', {
    access: 'admin',
    summary: 'Delete a key; answers it as it was (without its private key)',
    input: SshKeyIdInput,
    output: SshKeyView,
    handler({ sshKeyId }, ctx) {
      const { organizationId, em } = scope(ctx);
      return keys.remove(sshKeyId, organizationId, em);
    },
  }),
  sshKey.mutation('generate', {
    summary: 'A new key pair (Ed25519 unless type is "rsa"), not stored: pass it to sshKey.create to keep it',
    input: GenerateInput,
    output: GeneratedKeyPair,
    handler: ({ type }) => keys.generate(type ?? 'ed25519'),
  }),
];
