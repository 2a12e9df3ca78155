// gitProvider.* — the organization's git hosting connections, whatever their forge (each forge's
// own router, github.* and the others, is made from its connection form: forge-procedures.ts). No
// answer carries a secret.
import { Type, router, schema, type GitProvider } from '@berth/core';
import { connectionRecordSchema } from './records.ts';
import { GitProviderIdInput, GitProviderListed, GitProviderView, ToggleShareInput } from './schemas.ts';

const { Nullable } = schema;
const gitProvider = router('gitProvider', 'organization');

/** gitProvider.*; getAll answers, under each enabled forge's name, the record of those that answer one (`connection.wire.record`), with its configured flag where it has one. */
export const gitProviderProcedures = (forges: GitProvider[]) => [
  gitProvider.query('getAll', {
    permission: 'member',
    summary: "Every git provider connection of the organization, newest first, with its type's record (secrets never answered) and whether the caller owns it",
    input: Type.Object({}),
    output: Type.Array(
      Type.Object({
        ...GitProviderListed.properties,
        ...Object.fromEntries(
          forges
            .filter(p => p.connection?.wire?.record)
            .map(p => {
              const flag = p.connection!.wire!.configured;
              const record = connectionRecordSchema(p);
              return [p.id, Nullable(flag ? Type.Object({ ...record.properties, [flag.field]: Type.Boolean({ description: flag.description }) }) : record)];
            }),
        ),
      }),
    ),
    handler: (_input, ctx) => ctx.cradle.gitConnections.all(),
  }),
  gitProvider.query('allForPermissions', {
    permission: 'member.update',
    summary: "Every git provider connection of the organization, newest first, by id, name and type: what a member's access is granted from (no licence needed)",
    input: Type.Object({}),
    output: Type.Array(Type.Object({ gitProviderId: Type.String(), name: Type.String(), providerType: Type.String() })),
    handler: async (_input, ctx) => (await ctx.cradle.gitConnections.all()).map(({ gitProviderId, name, providerType }) => ({ gitProviderId, name, providerType })),
  }),
  gitProvider.mutation('toggleShare', {
    permission: 'member',
    summary: 'Share a connection with the organization or stop sharing it (its owner only)',
    input: ToggleShareInput,
    output: GitProviderView,
    handler: ({ gitProviderId, sharedWithOrganization }, ctx) => ctx.cradle.gitConnections.toggleShare(gitProviderId, sharedWithOrganization),
  }),
  gitProvider.mutation('remove', {
    permission: 'gitProviders.delete',
    summary: 'Delete a connection; refused (409, naming them) while applications or compose stacks deploy from it',
    input: GitProviderIdInput,
    output: Type.Object({ success: Type.Boolean() }),
    handler: ({ gitProviderId }, ctx) => ctx.cradle.gitConnections.remove(gitProviderId),
  }),
];
