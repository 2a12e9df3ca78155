// volumeBackups.*: the peer's list, create, one, update, delete, runManually, and Berth's restore.
import { Type, router, type Procedure } from '@berth/core';
import { inOrganization } from './in-organization.ts';
import type { VolumeBackupService } from './volume-backups.ts';
import { VolumeBackupId, VolumeRestoreAnswer, volumeSchemas, type VolumeBackupInput, type VolumeBackupUpdateInput } from './volume-schemas.ts';

const volumeBackups = router('volumeBackups', 'organization');

// Made once every plugin is set up: the kinds with volumes give serviceType's values and the owner fields.
export const volumeBackupProcedures = (service: VolumeBackupService) => (): Procedure[] => {
  const s = volumeSchemas(service.kinds());
  return [
    volumeBackups.query('list', {
      permission: 'volumeBackup.read',
      summary: 'The volume backups of a workload (id of kind volumeBackupType), newest first',
      input: s.List,
      output: Type.Array(s.ListItem),
      handler: inOrganization((input, organizationId, em) => service.list(input, organizationId, em)),
    }),
    volumeBackups.mutation('create', {
      permission: 'volumeBackup.create',
      summary: "Schedule backups of a workload's volume (its data volume or a mount volume) to a destination",
      input: s.Create,
      output: s.View,
      handler: inOrganization((input, organizationId, em) => service.create(input as VolumeBackupInput, organizationId, em)),
    }),
    volumeBackups.query('one', {
      permission: 'volumeBackup.read',
      summary: "A volume backup, with its workload's record (its environment and project joined) and its destination (without its keys)",
      input: VolumeBackupId,
      output: s.One,
      handler: inOrganization(({ volumeBackupId }, organizationId, em) => service.one(volumeBackupId, organizationId, em)),
    }),
    volumeBackups.mutation('update', {
      permission: 'volumeBackup.update',
      summary: 'Change a volume backup',
      input: s.Update,
      output: s.View,
      handler: inOrganization((input, organizationId, em) => service.update(input as VolumeBackupUpdateInput, organizationId, em)),
    }),
    volumeBackups.mutation('delete', {
      permission: 'volumeBackup.delete',
      summary: 'Delete a volume backup and its runs (its files stay in the destination)',
      input: VolumeBackupId,
      output: s.View,
      handler: inOrganization(({ volumeBackupId }, organizationId, em) => service.remove(volumeBackupId, organizationId, em)),
    }),
    volumeBackups.mutation('runManually', {
      permission: 'volumeBackup.create',
      summary: 'Back the volume up now (a deployment of the volume backup); true once the file is stored whole, else a 400 with why',
      input: VolumeBackupId,
      output: Type.Boolean(),
      handler: inOrganization(({ volumeBackupId }, organizationId, em) => service.runManually(volumeBackupId, organizationId, em)),
    }),
    volumeBackups.mutation('restore', {
      permission: 'volumeBackup.restore',
      summary: "Berth: restore a volume backup file into a workload's volume, as a queued job; what uses the volume is stopped and started again",
      description:
        "The peer's restoreVolumeBackupWithLogs input (a subscription outside its OpenAPI document). The file is read whole first; the services using the volume are scaled to 0, the volume emptied and the files written back, then the services get their replicas back. Follow it with deployment.one / the deployment log.",
      input: s.RestoreInput,
      output: VolumeRestoreAnswer,
      handler: inOrganization((input, organizationId, em) => service.restore(input, organizationId, em)),
    }),
  ];
};
