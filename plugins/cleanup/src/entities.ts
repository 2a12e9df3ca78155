// The daily cleanup's state per host: this machine's switch (a server's is its record's
// enableDockerCleanup) and the latest cron window handled, so a restart neither repeats nor loses one.
import { columns, defineEntity, p } from '@berth/core';

export const HostCleanup = defineEntity({
  name: 'HostCleanup',
  tableName: 'host_cleanups',
  properties: {
    /** `this-machine`, or a serverId. */
    hostKey: p.string().length(32).primary(),
    /** This machine's switch (settings.updateDockerCleanup without serverId); unused for a server. */
    enableDockerCleanup: p.boolean(),
    /** Whose run this machine's daily cleanup is (who turned it on); a server's organization for a server. */
    organizationId: columns.berthId().nullable(),
    lastRunAt: p.datetime().nullable(),
  },
});

export type HostCleanupRow = InstanceType<typeof HostCleanup.class>;

/**
 * The proxy's access log cleanup (the peer's log cleanup): one row, `this-machine`, its schedule and
 * the latest cron window handled. No row: the peer's default, daily at midnight.
 */
export const AccessLogCleanup = defineEntity({
  name: 'AccessLogCleanup',
  tableName: 'access_log_cleanups',
  properties: {
    hostKey: p.string().length(32).primary(),
    /** When the access log is trimmed (cron, UTC); null: never. */
    cronExpression: p.string().length(100).nullable(),
    lastRunAt: p.datetime().nullable(),
  },
});

export const cleanupEntities = [HostCleanup, AccessLogCleanup];
