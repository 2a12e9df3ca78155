// auditLog.all — the organization's audit log, as the peer's: who holds auditLog.read reads it (owners, admins). No
// procedure changes or removes an entry: the log is append-only through the API.
import { router } from '@berth/core';
import { AllInput, AllOutput } from './schemas.ts';

const auditLog = router('auditLog', 'organization');

export const auditLogProcedures = [
  auditLog.query('all', {
    // The peer's auditLog.read: owners and admins, and a custom role that grants it.
    permission: 'auditLog.read',
    summary:
      "The organization's audit log, newest first: every change made through the API (who, what, when, from where, how it ended), filtered by user, e-mail, record name, action, resource type and time, paged (limit at most 500). Its owner and admins (and a custom role granting auditLog.read) only",
    input: AllInput,
    output: AllOutput,
    handler: (input, ctx) => ctx.cradle.auditLog.all(ctx.principal.organizationId, input, ctx.cradle.em),
  }),
];
