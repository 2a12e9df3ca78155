// user.assignPermissions and user.getPermissions, as the peer's: an owner or admin gives a member
// the peer's switches (canCreateProjects…) and the projects, environments, services, git providers
// and servers it may reach; every member reads what it may do.
import { Type, MEMBER_SWITCHES, router, statements } from '@berth/core';

const user = router('user', 'organization');
const Ids = (what: string) => Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 10_000, description: `the ${what} the member may reach` });

const AssignInput = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: "the member's user id" }),
  accessedProjects: Ids('projects'),
  accessedEnvironments: Ids('environments'),
  accessedServices: Ids('services (applications, compose stacks, databases)'),
  accessedGitProviders: Ids('git provider connections'),
  accessedServers: Ids('servers'),
  ...Object.fromEntries(MEMBER_SWITCHES.map(name => [name, Type.Boolean()])),
  allRecords: Type.Optional(Type.Boolean({ description: "Berth's addition: every record of the organization, present and future, whatever the lists say (default false)" })),
});

/** resource → action → whether the caller may. */
const Resolved = Type.Object(Object.fromEntries(Object.entries(statements).map(([resource, actions]) => [resource, Type.Object(Object.fromEntries(actions.map(a => [a, Type.Boolean()])))])));
const Nothing = Type.Unsafe<null>({ type: ['null'], description: 'nothing (the peer answers no value)' });

export const grantProcedures = [
  user.mutation('assignPermissions', {
    permission: 'member.update',
    summary: "Set a member's switches (canCreateProjects, canAccessToDocker, …) and the projects, environments, services, git providers and servers it may reach; takes effect on its next call",
    input: AssignInput,
    output: Nothing,
    handler: (input, ctx) => ctx.cradle.memberGrants.assign(input),
  }),
  user.query('getPermissions', {
    permission: 'member',
    summary: 'What the caller may do: every resource and action of customRole.getStatements, true or false',
    input: Type.Object({}),
    output: Resolved,
    handler: (_i, ctx) => ctx.cradle.memberGrants.mine(),
  }),
];
