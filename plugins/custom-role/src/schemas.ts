// customRole.*'s inputs and answers, as the peer's.
import { Type, schema, type Static } from '@berth/core';

const { Nullable } = schema;

/** A role's name: the built-in names are refused where a custom role is made or renamed. */
const RoleName = () => Type.String({ minLength: 1, maxLength: 50, pattern: '^[^\\s].*$', description: "the role's name (not owner, admin or member)" });
/** resource → actions, e.g. {"service": ["read", "create"], "deployment": ["create"]} (customRole.getStatements lists them). */
export const Permissions = Type.Record(Type.String({ maxLength: 64 }), Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 }), {
  description: 'resource → the actions granted on it (customRole.getStatements lists every resource and action)',
});

export const CreateInput = Type.Object({ roleName: RoleName(), permissions: Permissions });
export const UpdateInput = Type.Object({ roleName: Type.String({ minLength: 1, maxLength: 50 }), newRoleName: Type.Optional(RoleName()), permissions: Permissions });
export const RoleNameInput = Type.Object({ roleName: Type.String({ minLength: 1, maxLength: 50 }) });

/** The stored role, as the peer's organization_role row (its statement as JSON text). */
export const RoleRow = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  role: Type.String(),
  permission: Type.String({ description: 'the statement as JSON text: resource → actions' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Nullable(Type.String({ format: 'date-time' })),
});
export type RoleRow = Static<typeof RoleRow>;

/** customRole.all's item: a role with its statement and how many members hold it. */
export const RoleSummary = Type.Object({
  role: Type.String(),
  permissions: Permissions,
  createdAt: Type.String({ format: 'date-time' }),
  ids: Type.Array(Type.String()),
  memberCount: Type.Integer({ minimum: 0 }),
});
export type RoleSummary = Static<typeof RoleSummary>;

export const RoleMember = Type.Object({ id: Type.String(), userId: Type.String(), email: Type.String(), firstName: Type.String(), lastName: Type.String() });
export type RoleMember = Static<typeof RoleMember>;
