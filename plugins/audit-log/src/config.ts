// The audit log's configuration keys (section "audit-log").
import { Type, type Static } from '@berth/core';

const AuditLogConfig = Type.Object({
  auditRetentionDays: Type.Integer({
    env: 'BERTH_AUDIT_RETENTION_DAYS',
    minimum: 1,
    default: 365,
    description: "Days an audit entry is kept; older sealed entries are removed daily, the chain's anchor keeping the last removed one's hash so verify still checks the rest",
  }),
});
export default AuditLogConfig;
export type AuditLogSettings = Static<typeof AuditLogConfig>;

declare module '@berth/core' {
  interface BerthConfig extends AuditLogSettings {}
}
