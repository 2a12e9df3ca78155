// The wire shapes of volumeBackups.*, as the peer's (v0.30.2) volume_backup table and router
// have them, and Berth's volumeBackups.restore (the peer restores through a subscription outside
// its OpenAPI document, restoreVolumeBackupWithLogs: the same input, answered with the job).
import { Placement, Type, schema, type TSchema } from '@berth/core';
import { VOLUME_NAME } from '@berth/plugin-workloads';
import { DestinationView, restoreAnswer } from './schemas.ts';

const { Nullable, Timestamp } = schema;

/** Owners of the peer's volume backups that may not be registered here: their fields answer null then (strict clients require them). */
const PEER_ONLY_OWNERS = ['compose', 'libsql']; // kind-names: the peer's owner relations, null while no registered kind serves them (the compose plugin can be disabled)
const Id = Type.String({ minLength: 1, maxLength: 64 });
const VolumeName = Type.String({ minLength: 1, maxLength: 255, pattern: VOLUME_NAME.source });

/** The peer's owner relation names: the kinds with volumes here, and the peer's others (always null). */
export const volumeOwners = (kinds: string[]) => [...kinds, ...PEER_ONLY_OWNERS.filter(o => !kinds.includes(o))];

/** A kind with volumes as volumeBackups.one joins its workload: its record's schema, when the kind answers its record. */
export interface VolumeOwnerKind {
  kind: string;
  idField: string;
  recordSchema?: TSchema;
}

/**
 * The workload as volumeBackups.one joins it, with its environment and project (as the peer):
 * the kind's whole record when it answers one, else its id, appName and serverId.
 */
export const ownerRecordSchema = (k: VolumeOwnerKind) =>
  Type.Object({
    ...((k.recordSchema as { properties?: Record<string, TSchema> } | undefined)?.properties ?? { [k.idField]: Type.String(), appName: Type.String(), serverId: Nullable(Type.String()) }),
    environment: Placement,
  });

/** The schemas that depend on the kinds with volumes (made once every plugin is set up). */
export function volumeSchemas(ownerKinds: VolumeOwnerKind[]) {
  const kinds = ownerKinds.map(k => k.kind);
  const owners = volumeOwners(kinds);
  const ServiceType = Type.Union(kinds.map(t => Type.Literal(t)));
  const fields = {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    volumeName: VolumeName,
    prefix: Type.String({
      maxLength: 200,
      pattern: '^(?!.*(^|/)\\.\\.?(/|$))[A-Za-z0-9._/-]*$',
      description: "folder below the workload's appName in the destination: letters, digits, . _ - and /, no . or .. segment",
    }),
    serviceType: Type.Optional(ServiceType),
    appName: Type.Optional(Type.String({ maxLength: 64, description: 'ignored: Berth names the volume backup itself' })),
    serviceName: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    turnOff: Type.Optional(Type.Boolean({ description: 'scale the services using the volume to 0 during the copy, and back to their replicas after' })),
    cronExpression: Type.String({ minLength: 1, maxLength: 100, description: 'cron expression (5 or 6 fields)' }),
    keepLatestCount: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    enabled: Type.Optional(Nullable(Type.Boolean())),
    ...Object.fromEntries(owners.map(o => [`${o}Id`, Type.Optional(Nullable(Type.String({ maxLength: 64 })))])),
    createdAt: Type.Optional(Type.String({ maxLength: 64, description: 'ignored' })),
    destinationId: Type.String({ minLength: 1, maxLength: 64 }),
  };
  const View = Type.Object({
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
    ...Object.fromEntries(owners.map(o => [`${o}Id`, Nullable(Type.String())])),
    createdAt: Timestamp(),
    destinationId: Type.String(),
    organizationId: Type.String(),
    lastRunAt: Nullable(Timestamp()),
    lastError: Nullable(Type.String({ description: 'Berth: why the last run failed; null after a success' })),
  });
  return {
    Create: Type.Object(fields),
    Update: Type.Object({ ...fields, volumeBackupId: Id }),
    List: Type.Object({ id: Id, volumeBackupType: ServiceType }),
    View,
    // An entry of list: each owner relation as the peer's list joins it (its id, appName and serverId), null but for its own.
    ListItem: Type.Object({
      ...View.properties,
      ...Object.fromEntries(owners.map(o => [o, Nullable(Type.Object({ [`${o}Id`]: Type.String(), appName: Type.String(), serverId: Nullable(Type.String()) }))])),
    }),
    One: Type.Object({
      ...View.properties,
      ...Object.fromEntries(
        owners.map(o => {
          const k = ownerKinds.find(x => x.kind === o);
          return [o, k ? Nullable(ownerRecordSchema(k)) : Type.Null({ description: `always null: no ${o} kind has volumes here` })];
        }),
      ),
      destination: Type.Omit(DestinationView, ['accessKey', 'secretAccessKey'], { description: 'the destination, without its keys' }),
    }),
    RestoreInput: Type.Object({
      backupFileName: Type.String({ minLength: 1, maxLength: 1024, description: "the file's key in the destination (as backup.listBackupFiles answers its Path)" }),
      destinationId: Type.String({ minLength: 1, maxLength: 64 }),
      volumeName: VolumeName,
      id: Type.String({ minLength: 1, maxLength: 64, description: 'the workload whose volume it is' }),
      serviceType: ServiceType,
      serverId: Type.Optional(Type.String({ maxLength: 64 })),
    }),
  };
}

export const VolumeBackupId = Type.Object({ volumeBackupId: Id });
export const VolumeRestoreAnswer = restoreAnswer('deployment.one, its log');

export interface VolumeBackupInput {
  name: string;
  volumeName: string;
  prefix: string;
  serviceType?: string;
  serviceName?: string | null;
  turnOff?: boolean;
  cronExpression: string;
  keepLatestCount?: number | null;
  enabled?: boolean | null;
  destinationId: string;
  [ownerId: string]: unknown;
}
export interface VolumeBackupUpdateInput extends VolumeBackupInput {
  volumeBackupId: string;
}
export interface VolumeRestoreRequest {
  backupFileName: string;
  destinationId: string;
  volumeName: string;
  id: string;
  serviceType: string;
  serverId?: string;
}
