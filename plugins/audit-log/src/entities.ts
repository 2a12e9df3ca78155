// An audit entry: who (user, credential, hook or job), what (procedure, the peer's action and
// resource type, target ids, the input with secrets masked), when, from where, and how it ended.
// chainIndex and hash are set by the sealer after commit (chain.ts), never at insert.
import { columns, defineEntity, p } from '@berth/core';

export const AuditEntry = defineEntity({
  name: 'AuditEntry',
  tableName: 'audit_log',
  properties: {
    id: columns.primaryId(),
    organizationId: columns.berthId().nullable(),
    userId: columns.berthId().nullable(),
    /** Filled by the sealer from the user's record (no extra query on the call's path). */
    userEmail: p.text().nullable(),
    userRole: p.string().nullable(),
    /** user:<id>, hook:<provider>, job:<name> or anonymous. */
    actor: p.string(),
    via: p.string().nullable(),
    credentialId: p.string().nullable(),
    action: p.string(),
    resourceType: p.string(),
    resourceId: p.text().nullable(),
    resourceName: p.text().nullable(),
    procedure: p.string(),
    targetIds: p.json<Record<string, string>>(),
    input: p.json<unknown>().nullable(),
    outcome: p.string(),
    errorCode: p.string().nullable(),
    errorMessage: p.text().nullable(),
    requestId: p.string(),
    address: p.string().nullable(),
    userAgent: p.text().nullable(),
    createdAt: p.datetime(),
    chainIndex: p.bigint('number').nullable(),
    hash: p.string().nullable(),
  },
});

export const auditLogEntities = [AuditEntry];
