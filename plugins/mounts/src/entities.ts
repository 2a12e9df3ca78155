// A mount of one workload. The owner is stored in the column named for its serviceType
// (applicationId, postgresId, ...), as the peer's Mount record does; organizationId confines
// every read and write without asking the workload's plugin.
import { defineEntity, p, newId } from '@berth/core';

export const Mount = defineEntity({
  name: 'Mount',
  tableName: 'mounts',
  properties: {
    mountId: p.string().length(32).primary().onCreate(() => newId()),
    type: p.enum(['bind', 'volume', 'file'] as const),
    hostPath: p.text().nullable(),
    volumeName: p.string().length(128).nullable(),
    filePath: p.text().nullable(),
    /** A file mount's content as SecretBox.encrypt sealed it (`v1:…`): config files often hold credentials. */
    content: p.text().nullable(),
    mountPath: p.text(),
    serviceType: p.enum(['application', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'compose'] as const),
    applicationId: p.string().length(32).nullable(),
    postgresId: p.string().length(32).nullable(),
    mariadbId: p.string().length(32).nullable(),
    mongoId: p.string().length(32).nullable(),
    mysqlId: p.string().length(32).nullable(),
    redisId: p.string().length(32).nullable(),
    composeId: p.string().length(32).nullable(),
    organizationId: p.string().length(32),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type MountRow = InstanceType<typeof Mount.class>;
export const mountEntities = [Mount];
