// A mount of one workload, owned by (serviceType, serviceId): the kind's wire name and the
// record's id, whatever kinds are registered. organizationId confines every read and write
// without asking the workload's plugin.
import { defineEntity, p, newId } from '@berth/core';

export const Mount = defineEntity({
  name: 'Mount',
  tableName: 'mounts',
  properties: {
    mountId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    type: p.enum(['bind', 'volume', 'file'] as const),
    hostPath: p.text().nullable(),
    volumeName: p.string().length(128).nullable(),
    /** The mount existed before Berth labelled mount volumes: its volume, unlabelled on the host, is adopted (see migrations). */
    volumeAdopted: p.boolean().default(false),
    filePath: p.text().nullable(),
    /** A file mount's content as SecretBox.encrypt sealed it (`v1:…`): config files often hold credentials. */
    content: p.text().nullable(),
    mountPath: p.text(),
    serviceType: p.string().length(32),
    serviceId: p.string().length(64),
    organizationId: p.string().length(32),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type MountRow = InstanceType<typeof Mount.class>;
export const mountEntities = [Mount];
