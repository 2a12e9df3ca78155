// sshKey.* — SSH keys of the caller's organization. Only generate answers a private key.
import { Type, router } from '@berth/core';
import { CreateInput, GenerateInput, GeneratedKeyPair, SshKeyIdInput, SshKeyView, UpdateInput } from './schemas.ts';

const sshKey = router('sshKey', 'organization');

export const sshKeyProcedures = [
  sshKey.mutation('create', {
    permission: 'sshKeys.create',
    summary: 'Store a key pair (the public and private keys must match); the private key is kept encrypted and never answered',
    input: CreateInput,
    output: SshKeyView,
    handler: (input, ctx) => ctx.cradle.sshKeyRequests.create(input),
  }),
  sshKey.query('one', {
    permission: 'sshKeys.read',
    summary: 'A key of the organization, without its private key',
    input: SshKeyIdInput,
    output: SshKeyView,
    handler: ({ sshKeyId }, ctx) => ctx.cradle.sshKeyRequests.one(sshKeyId),
  }),
  sshKey.query('all', {
    permission: 'sshKeys.read',
    summary: 'Every key of the organization, newest first, without private keys',
    input: Type.Object({}),
    output: Type.Array(SshKeyView),
    handler: (_input, ctx) => ctx.cradle.sshKeyRequests.all(),
  }),
  sshKey.query('allForApps', {
    permission: 'member',
    summary: 'Every key of the organization, newest first, by id and name: what an application or a compose stack can clone with',
    input: Type.Object({}),
    output: Type.Array(Type.Object({ sshKeyId: Type.String(), name: Type.String() })),
    handler: async (_input, ctx) => (await ctx.cradle.sshKeyRequests.all()).map(({ sshKeyId, name }) => ({ sshKeyId, name })),
  }),
  sshKey.mutation('update', {
    permission: 'sshKeys.create',
    summary: "Change a key's name, description or last-used time (the key material cannot change)",
    input: UpdateInput,
    output: SshKeyView,
    handler: (input, ctx) => ctx.cradle.sshKeyRequests.update(input),
  }),
  sshKey.mutation('remove', {
    permission: 'sshKeys.delete',
    summary: 'Delete a key; answers it as it was (without its private key)',
    input: SshKeyIdInput,
    output: SshKeyView,
    handler: ({ sshKeyId }, ctx) => ctx.cradle.sshKeyRequests.remove(sshKeyId),
  }),
  sshKey.mutation('generate', {
    permission: 'sshKeys.read',
    summary: 'A new key pair (Ed25519 unless type is "rsa"), not stored: pass it to sshKey.create to keep it',
    input: GenerateInput,
    output: GeneratedKeyPair,
    handler: ({ type }, ctx) => ctx.cradle.sshKeyRequests.generate(type ?? 'ed25519'),
  }),
];
