// Destinations (where backup files go), backups (what is dumped, when, where), the files each
// backup wrote (checksum, size, verification: the list is Berth's own, so retention deletes
// only this backup's files) and restores (one per restoreBackup, run as a queued job).
import { columns, defineEntity, p } from '@berth/core';

export const Destination = defineEntity({
  name: 'Destination',
  tableName: 'backup_destinations',
  properties: {
    destinationId: columns.primaryId(),
    name: p.text(),
    provider: p.text().nullable(),
    accessKey: p.text(),
    /** Sealed by SecretBox (`v1:…`). */
    secretAccessKey: p.text(),
    bucket: p.text(),
    region: p.text(),
    endpoint: p.text(),
    additionalFlags: p.json<string[]>().nullable(),
    serverId: columns.berthId().nullable(),
    organizationId: columns.berthId().index(),
    createdAt: columns.createdAt(),
  },
});

export const Backup = defineEntity({
  name: 'Backup',
  tableName: 'backups',
  properties: {
    backupId: columns.primaryId(),
    appName: p.string().length(64).unique(),
    schedule: p.text(),
    enabled: p.boolean().nullable(),
    database: p.text(),
    prefix: p.text(),
    serviceName: p.text().nullable(),
    destinationId: columns.berthId().index(),
    keepLatestCount: p.integer().nullable(),
    backupType: p.string().length(16).default('database'),
    /** The engine: a database driver's kind (postgres, mysql...), for backupType "database" also the workload's kind; or "web-server" for Berth's own data. */
    databaseType: p.string().length(32),
    /** The owning workload's id (a database record, or a stack whose service serviceName runs the database); null for a web-server backup. */
    databaseId: p.string().length(64).nullable().index(),
    userId: p.string().length(64).nullable(),
    metadata: p.json<Record<string, unknown>>().nullable(),
    organizationId: columns.berthId().index(),
    createdAt: columns.createdAt(),
    /** The operator's passphrase for the files, sealed by SecretBox; null = files not encrypted. */
    encryptionKey: p.text().nullable(),
    /** The last run: when it ended, and its error (null = it succeeded). */
    lastRunAt: p.datetime().nullable(),
    lastError: p.text().nullable(),
    /** Scheduled windows that passed without a run (Berth down, or the previous run still going), and the latest one. */
    missedWindows: p.integer().default(0),
    lastMissedAt: p.datetime().nullable(),
  },
});

export const BackupFile = defineEntity({
  name: 'BackupFile',
  tableName: 'backup_files',
  properties: {
    id: columns.primaryId(),
    backupId: columns.berthId().index(),
    destinationId: columns.berthId(),
    organizationId: columns.berthId(),
    /** The object's key in the destination. */
    key: p.text(),
    size: p.bigint('number'),
    /** sha256 of the stored bytes. */
    sha256: p.string().length(64),
    /** Restored into a throwaway container: true/false, null = not checked. */
    verified: p.boolean().nullable(),
    /** The driver's inventory of the restored copy (tables and row counts), or why the check failed. */
    verification: p.text().nullable(),
    createdAt: columns.createdAt(),
  },
});

export const Restore = defineEntity({
  name: 'Restore',
  tableName: 'backup_restores',
  properties: {
    restoreId: columns.primaryId(),
    organizationId: columns.berthId().index(),
    destinationId: columns.berthId(),
    /** As the backup's: "database", or the backupType of a kind running databases in its services. */
    backupType: p.string().length(16).default('database'),
    databaseType: p.string().length(32),
    databaseId: p.string().length(64),
    /** The service that runs the database, for kinds with several (null otherwise). */
    serviceName: p.text().nullable(),
    databaseName: p.text(),
    backupFile: p.text(),
    /** The passphrase given with the request (sealed), for an encrypted file Berth has no record of. */
    encryptionKey: p.text().nullable(),
    createdAt: columns.createdAt(),
  },
});

export const VolumeBackup = defineEntity({
  name: 'VolumeBackup',
  tableName: 'volume_backups',
  properties: {
    volumeBackupId: columns.primaryId(),
    name: p.text(),
    volumeName: p.text(),
    prefix: p.text(),
    /** The owning workload's kind (application, postgres...). */
    serviceType: p.string().length(32),
    /** The owning workload's id, of kind serviceType. */
    serviceId: p.string().length(64).index(),
    appName: p.string().length(64).unique(),
    serviceName: p.text().nullable(),
    /** Scale the workload's service to 0 during the copy, and back to its replicas after. */
    turnOff: p.boolean().default(false),
    cronExpression: p.text(),
    keepLatestCount: p.integer().nullable(),
    enabled: p.boolean().nullable(),
    destinationId: columns.berthId().index(),
    organizationId: columns.berthId().index(),
    createdAt: columns.createdAt(),
    /** When the schedule last handled it (a window at or before this is not run again). */
    lastRunAt: p.datetime().nullable(),
    lastError: p.text().nullable(),
  },
});

/** One volume restore request, run as a deployment of the restore target (action restoreVolume). */
export const VolumeRestore = defineEntity({
  name: 'VolumeRestore',
  tableName: 'volume_restores',
  properties: {
    restoreId: columns.primaryId(),
    organizationId: columns.berthId().index(),
    destinationId: columns.berthId(),
    serviceType: p.string().length(32),
    serviceId: p.string().length(64),
    volumeName: p.text(),
    backupFile: p.text(),
    createdAt: columns.createdAt(),
  },
});

export type DestinationRow = InstanceType<typeof Destination.class>;
export type BackupRow = InstanceType<typeof Backup.class>;
export type BackupFileRow = InstanceType<typeof BackupFile.class>;
export type RestoreRow = InstanceType<typeof Restore.class>;
export type VolumeBackupRow = InstanceType<typeof VolumeBackup.class>;
export type VolumeRestoreRow = InstanceType<typeof VolumeRestore.class>;
export const backupEntities = [Destination, Backup, BackupFile, Restore, VolumeBackup, VolumeRestore];
