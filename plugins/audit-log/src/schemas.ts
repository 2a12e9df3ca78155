// auditLog.all as the peer's: its filters and paging, and its answer { logs, total } with the peer's
// audit_log row; Berth's own detail (procedure, outcome, target ids, the masked input, credential,
// address, chain) in the row's metadata, the JSON text the peer keeps there.
import { Type, type Static } from '@berth/core';

/** The actions the peer's filter takes. */
export const ACTIONS = ['create', 'update', 'delete', 'deploy', 'cancel', 'redeploy', 'login', 'logout'] as const;
/** The resource types the peer's filter takes. */
export const RESOURCE_TYPES = [
  'project',
  'service',
  'environment',
  'deployment',
  'user',
  'customRole',
  'domain',
  'certificate',
  'registry',
  'server',
  'sshKey',
  'gitProvider',
  'notification',
  'settings',
  'session',
] as const;

const When = (what: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: `${what}: an ISO 8601 date or date-time` }));

export const AllInput = Type.Object({
  userId: Type.Optional(Type.String({ maxLength: 255, description: 'entries of this user only' })),
  userEmail: Type.Optional(Type.String({ maxLength: 255, description: "entries whose user's e-mail contains this (case-insensitive)" })),
  resourceName: Type.Optional(Type.String({ maxLength: 255, description: 'entries whose record name contains this (case-insensitive)' })),
  action: Type.Optional(
    Type.Union(
      ACTIONS.map(a => Type.Literal(a)),
      { description: 'entries of this action only' },
    ),
  ),
  resourceType: Type.Optional(
    Type.Union(
      RESOURCE_TYPES.map(r => Type.Literal(r)),
      { description: 'entries of this resource type only' },
    ),
  ),
  from: When('entries made at or after'),
  to: When('entries made at or before'),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'entries per page' }),
  offset: Type.Integer({ minimum: 0, default: 0, description: 'entries skipped (newest first)' }),
});
export type AllInput = Static<typeof AllInput>;

export const AuditLogRow = Type.Object({
  id: Type.String(),
  organizationId: Type.Union([Type.String(), Type.Null()]),
  userId: Type.Union([Type.String(), Type.Null()]),
  userEmail: Type.String({ description: "the user's e-mail when the entry was sealed; empty for a hook, a job or nobody signed in" }),
  userRole: Type.String({ description: 'owner, admin or member; empty without a user' }),
  action: Type.String({ description: "the peer's action: create, update, delete, deploy, cancel, login, start, stop, restore, run…" }),
  resourceType: Type.String({ description: "the peer's resource type (service for a workload); a Berth router the peer has no type for keeps its name" }),
  resourceId: Type.Union([Type.String(), Type.Null()]),
  resourceName: Type.Union([Type.String(), Type.Null()]),
  metadata: Type.Union([Type.String(), Type.Null()], {
    description: 'JSON text: procedure, outcome, error {code, message}, targetIds, input (secrets masked), actor, via, credentialId, address, userAgent, requestId, chainIndex, hash',
  }),
  createdAt: Type.String({ format: 'date-time' }),
});

export const AllOutput = Type.Object({ logs: Type.Array(AuditLogRow), total: Type.Number({ description: 'entries matching the filters' }) });
export type AllOutput = Static<typeof AllOutput>;
