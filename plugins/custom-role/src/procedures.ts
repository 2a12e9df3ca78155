// customRole.* — the peer's router of an organization's own roles. Reading the roles and the
// statements is every member's (the peer's); making, changing and removing them takes the
// permission `ac` gives (owners and admins; the peer: its enterprise procedure for them).
import { Type, router, statements } from '@berth/core';
import { CreateInput, RoleMember, RoleNameInput, RoleRow, RoleSummary, UpdateInput } from './schemas.ts';

const customRole = router('customRole', 'organization');

/** getStatements' answer: every resource and its actions (the peer answers its access-control statements). */
const Statements = Type.Record(Type.String(), Type.Array(Type.String()), { description: 'resource → every action a role may be given on it' });

export const customRoleProcedures = [
  customRole.query('all', {
    permission: 'member',
    summary: "The organization's custom roles: each with its statement (resource → actions), its record ids and how many members hold it",
    input: Type.Object({}),
    output: Type.Array(RoleSummary),
    handler: (_i, ctx) => ctx.cradle.customRoles.all(),
  }),
  customRole.mutation('create', {
    permission: 'ac.create',
    summary: 'Make a custom role from a statement (resource → actions, as getStatements lists them); at most 10 per organization; answers the stored role',
    input: CreateInput,
    output: RoleRow,
    handler: ({ roleName, permissions }, ctx) => ctx.cradle.customRoles.create(roleName, permissions),
  }),
  customRole.mutation('update', {
    permission: 'ac.update',
    summary: "Change a custom role's statement, and rename it with newRoleName (its members keep it); takes effect on their next call; answers the stored role",
    input: UpdateInput,
    output: RoleRow,
    handler: ({ roleName, newRoleName, permissions }, ctx) => ctx.cradle.customRoles.update(roleName, newRoleName, permissions),
  }),
  customRole.mutation('remove', {
    permission: 'ac.delete',
    summary: 'Remove a custom role that no member holds; answers {deleted}',
    input: RoleNameInput,
    output: Type.Object({ deleted: Type.Integer({ minimum: 0 }) }),
    handler: ({ roleName }, ctx) => ctx.cradle.customRoles.remove(roleName),
  }),
  customRole.query('membersByRole', {
    permission: 'member',
    summary: 'The members holding a role (built-in or custom): membership id, user id, e-mail and name',
    input: RoleNameInput,
    output: Type.Array(RoleMember),
    handler: ({ roleName }, ctx) => ctx.cradle.customRoles.membersByRole(roleName),
  }),
  customRole.query('getStatements', {
    permission: 'member',
    summary: 'Every resource and the actions a role may be given on it',
    input: Type.Object({}),
    output: Statements,
    handler: () => Object.fromEntries(Object.entries(statements).map(([resource, actions]) => [resource, [...actions]])),
  }),
];
