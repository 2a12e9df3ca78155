// The wire shapes of volumeBackups.*, as the peer's (v0.30.2) volume_backup table and router
// have them, and Berth's volumeBackups.restore (the peer restores through a subscription outside
// its OpenAPI document, restoreVolumeBackupWithLogs: the same input, answered with the job).
import { Type, schema, type Static } from '@berth/core';
import { VOLUME_NAME } from '@berth/plugin-workloads';
import { DestinationView } from './schemas.ts';

const { Nullable, Timestamp } = schema;

/** The peer's owner id fields of a volume backup (a kind not registered here answers null). */
export const VOLUME_OWNER_FIELDS = ['applicationId', 'postgresId', 'mariadbId', 'mongoId', 'mysqlId', 'redisId', 'libsqlId', 'composeId'];
const SERVICE_TYPES = ['application', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'compose', 'libsql'];
const ServiceType = Type.Union(SERVICE_TYPES.map(t => Type.Literal(t)));
const Id = Type.String({ minLength: 1, maxLength: 64 });
const VolumeName = Type.String({ minLength: 1, maxLength: 255, pattern: VOLUME_NAME.source });

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  volumeName: VolumeName,
  prefix: Type.String({ maxLength: 200, pattern: '^(?!.*(^|/)\\.\\.?(/|$))[A-Za-z0-9._/-]*$', description: 'folder below the workload\'s appName in the destination: letters, digits, . _ - and /, no . or .. segment' }),
  serviceType: Type.Optional(ServiceType),
  appName: Type.Optional(Type.String({ maxLength: 64, description: 'ignored: Berth names the volume backup itself' })),
  serviceName: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  turnOff: Type.Optional(Type.Boolean({ description: 'scale the services using the volume to 0 during the copy, and back to their replicas after' })),
  cronExpression: Type.String({ minLength: 1, maxLength: 100, description: 'cron expression (5 or 6 fields)' }),
  keepLatestCount: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  enabled: Type.Optional(Nullable(Type.Boolean())),
  ...Object.fromEntries(VOLUME_OWNER_FIELDS.map(f => [f, Type.Optional(Nullable(Type.String({ maxLength: 64 })))])),
  createdAt: Type.Optional(Type.String({ maxLength: 64, description: 'ignored' })),
  destinationId: Type.String({ minLength: 1, maxLength: 64 }),
};

export const VolumeBackupCreate = Type.Object(fields);
export const VolumeBackupUpdate = Type.Object({ ...fields, volumeBackupId: Id });
export const VolumeBackupId = Type.Object({ volumeBackupId: Id });
export const VolumeBackupList = Type.Object({ id: Id, volumeBackupType: ServiceType });

export const VolumeBackupView = Type.Object({
  volumeBackupId: Type.String(),
  name: Type.String(),
  volumeName: Type.String(),
  prefix: Type.String(),
  serviceType: Type.String(),
  appName: Type.String(),
  serviceName: Nullable(Type.String()),
  turnOff: Type.Boolean(),
  cronExpression: Type.String(),
  keepLatestCount: Nullable(Type.Number()),
  enabled: Nullable(Type.Boolean()),
  ...Object.fromEntries(VOLUME_OWNER_FIELDS.map(f => [f, Nullable(Type.String())])),
  createdAt: Timestamp(),
  destinationId: Type.String(),
  organizationId: Type.String(),
  lastRunAt: Nullable(Timestamp()),
  lastError: Nullable(Type.String({ description: 'Berth: why the last run failed; null after a success' })),
});
export const VolumeBackupOne = Type.Object({
  ...VolumeBackupView.properties,
  destination: Type.Omit(DestinationView, ['accessKey', 'secretAccessKey'], { description: 'the destination, without its keys' }),
});

export const VolumeRestoreInput = Type.Object({
  backupFileName: Type.String({ minLength: 1, maxLength: 1024, description: 'the file\'s key in the destination (as backup.listBackupFiles answers its Path)' }),
  destinationId: Type.String({ minLength: 1, maxLength: 64 }),
  volumeName: VolumeName,
  id: Type.String({ minLength: 1, maxLength: 64, description: 'the workload whose volume it is' }),
  serviceType: ServiceType,
  serverId: Type.Optional(Type.String({ maxLength: 64 })),
});
export const VolumeRestoreAnswer = Type.Object({
  deploymentId: Type.String({ description: 'the restore job (deployment.one, its log)' }),
  restoreId: Type.String(),
  status: Type.String(),
});

export type VolumeBackupInput = Static<typeof VolumeBackupCreate> & Record<string, unknown>;
export type VolumeBackupUpdateInput = Static<typeof VolumeBackupUpdate> & Record<string, unknown>;
export type VolumeRestoreRequest = Static<typeof VolumeRestoreInput>;
