// registry.* — the container registries of the caller's organization. No answer carries a password.
import { Type, router, schema } from '@berth/core';
import { CreateInput, EnableSelfHostedInput, RegistryIdInput, RegistryView, TestByIdInput, TestInput, UpdateInput } from './schemas.ts';

const registry = router('registry', 'organization');

export const registryProcedures = [
  registry.mutation('create', {
    permission: 'registry.create',
    summary: 'Store a registry; its password is kept encrypted and never answered (registry.testRegistry checks it)',
    input: CreateInput,
    output: RegistryView,
    handler: (input, ctx) => ctx.cradle.registryRequests.create(input),
  }),
  registry.query('one', {
    permission: 'registry.read',
    summary: 'A registry of the organization, without its password',
    input: RegistryIdInput,
    output: RegistryView,
    handler: ({ registryId }, ctx) => ctx.cradle.registryRequests.one(registryId),
  }),
  registry.query('all', {
    permission: 'registry.read',
    summary: 'Every registry of the organization, oldest first, without passwords',
    input: Type.Object({}),
    output: Type.Array(RegistryView),
    handler: (_input, ctx) => ctx.cradle.registryRequests.all(),
  }),
  registry.mutation('update', {
    permission: 'registry.create',
    summary: "Change a registry's name, address, prefix, type or credentials",
    input: UpdateInput,
    output: schema.Ok(),
    handler: (input, ctx) => ctx.cradle.registryRequests.update(input),
  }),
  registry.mutation('remove', {
    permission: 'registry.delete',
    summary: 'Delete a registry; answers it as it was (without its password). No node keeps its credentials: none was ever written there',
    input: RegistryIdInput,
    output: RegistryView,
    handler: ({ registryId }, ctx) => ctx.cradle.registryRequests.remove(registryId),
  }),
  registry.mutation('testRegistry', {
    permission: 'registry.read',
    summary:
      'Log in, push a tiny image generated on the spot, pull it back, from the engine of serverId (this machine without one), then remove it there and from the registry where it allows deletion; an error names the failing step (login, push or pull)',
    input: TestInput,
    output: schema.Ok(),
    handler: (input, ctx) => ctx.cradle.registryRequests.test(input),
  }),
  registry.mutation('testRegistryById', {
    permission: 'registry.read',
    summary: "registry.testRegistry with a stored registry's credentials",
    input: TestByIdInput,
    output: schema.Ok(),
    handler: ({ registryId, serverId }, ctx) => ctx.cradle.registryRequests.testById(registryId, serverId),
  }),
  registry.mutation('enableSelfHostedRegistry', {
    permission: 'registry.create',
    // On this machine it runs on the instance's swarm and every node is made to trust its CA: its operators'.
    scope: { host: 'serverId' },
    summary:
      "Run a registry on the manager (this machine, or serverId) with these credentials (htpasswd, bcrypt), its data in a volume, reached over https through the proxy at registryUrl with the proxy's own CA, which every node's engine is made to trust; answers the selfHosted registry it stores once a login through the proxy succeeds",
    input: EnableSelfHostedInput,
    output: RegistryView,
    handler: (input, ctx) => ctx.cradle.registryRequests.enableSelfHosted(input),
  }),
];
