// A remote server of one organization: where it is, who logs in with which key, and the host key
// pinned on first use. The probe's counters (failedProbes, unreachableSince) and inactiveReason
// are Berth's own and never answered.
import { columns, defineEntity, p } from '@berth/core';

export const Server = defineEntity({
  name: 'Server',
  tableName: 'servers',
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    serverId: columns.primaryId(),
    name: p.string(),
    description: p.text().nullable(),
    ipAddress: p.string(),
    port: p.integer(),
    username: p.string(),
    appName: p.string(),
    enableDockerCleanup: p.boolean(),
    buildsConcurrency: p.integer(),
    serverStatus: p.string().length(16),
    /** Who set it inactive when it is not the organization's to undo ('billing'); null otherwise. Never answered. */
    inactiveReason: p.string().length(32).nullable(),
    serverType: p.string().length(16),
    command: p.text(),
    sshKeyId: columns.berthId().nullable(),
    /** OpenSSH's `SHA256:…` of the pinned host key; null until the first connection pins one. */
    hostKeyFingerprint: p.string().length(64).nullable(),
    metricsConfig: p.json<Record<string, unknown>>(),
    organizationId: columns.berthId(),
    /** Failed probes in a row (0 after a success). */
    failedProbes: p.integer(),
    /** Since when the server counts as unreachable (two failed probes); null while it answers. */
    unreachableSince: p.datetime().nullable(),
    createdAt: columns.createdAt(),
  },
});

export type ServerRow = InstanceType<typeof Server.class>;
export const serverEntities = [Server];
