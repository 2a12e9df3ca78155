// A file patch of one workload (the peer's patch table): the workload is (serviceType, serviceId),
// its kind's wire name and its record's id, whatever kinds are registered; organizationId confines
// every read and write without asking the workload's plugin. The content is sealed at rest: a
// patched file is often a configuration file, and those hold credentials.
import { columns, defineEntity, p } from '@berth/core';

export const PATCH_TYPES = ['create', 'update', 'delete'] as const;
export type PatchType = (typeof PATCH_TYPES)[number];

export const Patch = defineEntity({
  name: 'Patch',
  tableName: 'patches',
  properties: {
    patchId: columns.primaryId(),
    type: p.enum(PATCH_TYPES),
    /** The file's path inside the repository (checked by paths.ts on every write). */
    filePath: p.text(),
    enabled: p.boolean(),
    /** SecretBox.sealText of the file's new content ('' for a delete). */
    content: p.text(),
    serviceType: p.string().length(32),
    serviceId: p.string().length(64),
    organizationId: columns.berthId(),
    createdAt: columns.createdAt(),
    updatedAt: p.datetime().nullable(),
  },
});

export type PatchRow = InstanceType<typeof Patch.class>;
export const patchEntities = [Patch];
