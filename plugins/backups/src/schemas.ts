// The wire shapes of destination.* and backup.*, as the peer's (v0.30.2) tables and inputs have
// them. The backup's `<kind>Id` fields and its databaseType are derived from the kinds that
// support backups, so they are made once every plugin is set up.
import { Type, deploymentStates, deploymentStatuses, schema, type Static, type TSchema } from '@berth/core';
import { WEB_SERVER } from './web-server.ts';

const { Nullable, Timestamp } = schema;

const FLAG = '^--[a-zA-Z0-9-]+(=[a-zA-Z0-9._:/@-]+)?$';

const destinationFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  provider: Type.Optional(
    Nullable(
      Type.String({ maxLength: 64, description: 'the storage provider: "local" (a directory below the backup root, bucket = its name), or any S3-compatible service (AWS, Cloudflare, Minio...)' }),
    ),
  ),
  accessKey: Type.String({ maxLength: 256 }),
  bucket: Type.String({ maxLength: 255 }),
  region: Type.String({ maxLength: 100 }),
  endpoint: Type.String({ maxLength: 1024 }),
  secretAccessKey: Type.String({ maxLength: 1024 }),
  additionalFlags: Type.Optional(Nullable(Type.Array(Type.String({ maxLength: 200, pattern: FLAG }), { maxItems: 50 }))),
  serverId: Type.Optional(Type.String({ maxLength: 64 })),
};

export const DestinationInput = Type.Object(destinationFields);
const Id = Type.String({ minLength: 1, maxLength: 64 });
export const DestinationUpdate = Type.Object({ ...destinationFields, destinationId: Id });
export const DestinationId = Type.Object({ destinationId: Id });

export const DestinationView = Type.Object({
  destinationId: Type.String(),
  name: Type.String(),
  provider: Nullable(Type.String()),
  accessKey: Type.String(),
  bucket: Type.String(),
  region: Type.String(),
  endpoint: Type.String(),
  secretAccessKey: Type.String({ description: 'in `one`, `create` and `update`; empty in `all`' }),
  additionalFlags: Nullable(Type.Array(Type.String())),
  organizationId: Type.String(),
  createdAt: Timestamp(),
});

export const ConnectionResult = Type.Boolean({ description: 'true once a small object was written, read back and deleted; otherwise a 400 naming what failed (endpoint, auth, bucket)' });

export const BackupId = Type.Object({ backupId: Id });

export const BackupFileView = Type.Object({
  Path: Type.String({ description: 'the key below the bucket' }),
  Name: Type.String(),
  Size: Type.Number(),
  IsDir: Type.Boolean(),
  ModTime: Nullable(Timestamp()),
  backupId: Nullable(Type.String({ description: 'Berth: the backup that wrote it (null when Berth did not)' })),
  checksum: Nullable(Type.String({ description: 'Berth: sha256 of the file as stored' })),
  verified: Nullable(Type.Boolean({ description: 'Berth: restored into a throwaway container of the same kind after the backup (null = not checked)' })),
  verification: Nullable(Type.String({ description: 'Berth: what the restored copy held (one line per table: name, tab, row count), or why the check failed' })),
});
export const ListFilesInput = Type.Object({ destinationId: Id, search: Type.String({ maxLength: 1024 }), serverId: Type.Optional(Type.String({ maxLength: 64 })) });

/** What a queued restore answers (service.ts queueRestore): its job, and where to follow it. */
export const restoreAnswer = (followIt: string) =>
  Type.Object({
    deploymentId: Type.String({ description: `the restore job (${followIt})` }),
    restoreId: Type.String(),
    status: Type.Enum(deploymentStatuses, { description: "the job's status as deployment.one answers it (running while queued)" }),
    state: Type.Enum(deploymentStates, { description: "Berth's state of the job: queued at first" }),
  });
export const RestoreAnswer = restoreAnswer('deployment.one, its log: deployment.readLog / the log stream');

/** A kind with backups as the schemas need it: its wire name, id field, the backupType of its backups and the databaseTypes it backs up (its services' engines; absent = itself). */
export interface BackupKindField {
  kind: string;
  idField: string;
  backupType?: string;
  engines?: string[];
}

/** Id fields of the peer's backup row whose kinds may not be registered here: answered null then (strict clients require them). */
const PEER_OWNER_ID_FIELDS = ['composeId', 'libsqlId'];
/** The peer's owner id fields no registered kind answers. */
export const unregisteredOwnerIds = (kinds: BackupKindField[]) => PEER_OWNER_ID_FIELDS.filter(f => !kinds.some(k => k.idField === f));

/** The peer's relations of a backup to its database's record whose kinds may not be registered here: answered null then. */
const PEER_DATABASE_RELATIONS = ['postgres', 'mysql', 'mariadb', 'mongo', 'libsql', 'compose']; // kind-names: the peer's relation names of backup.one, null for any kind not registered with backups here

/** The peer's database relations of a backup no kind with backups answers (null in backup.one). */
export const absentDatabaseRelations = (kinds: BackupKindField[]) => PEER_DATABASE_RELATIONS.filter(r => !kinds.some(k => k.kind === r));

/** backup.one's answer: the backup with its database's record under the kind's name (null for the other kinds), as the peer joins it. */
export function backupWithDatabaseSchema(BackupView: TSchema, kinds: (BackupKindField & { recordSchema?: TSchema })[]) {
  const registered = Object.fromEntries(kinds.map(k => [k.kind, Nullable(k.recordSchema ?? Type.Record(Type.String(), Type.Unknown()))]));
  const absent = Object.fromEntries(absentDatabaseRelations(kinds).map(r => [r, Type.Null({ description: `always null: no ${r} kind has backups here` })]));
  return Type.Object({ ...(BackupView as ReturnType<typeof backupSchemas>['BackupView']).properties, ...registered, ...absent });
}

/** The fields a backup's create and update share. */
const BackupFields = Type.Object({
  schedule: Type.String({ maxLength: 100, description: 'cron expression (5 or 6 fields)' }),
  enabled: Type.Optional(Nullable(Type.Boolean())),
  prefix: Type.String({
    minLength: 1,
    maxLength: 200,
    pattern: '^(?!.*(^|/)\\.\\.?(/|$))[A-Za-z0-9._/-]+$',
    description: 'folder of the files in the destination: letters, digits, . _ - and /, no . or .. segment',
  }),
  destinationId: Id,
  keepLatestCount: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  database: Type.String({ minLength: 1, maxLength: 255 }),
  serviceName: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  metadata: Type.Optional(Nullable(Type.Any())),
  encryptionKey: Type.Optional(
    Nullable(
      Type.String({ minLength: 16, maxLength: 1024, description: 'Berth: encrypt the files (AES-256-GCM) with this passphrase; kept sealed in Berth, never in the destination; null = no encryption' }),
    ),
  ),
});

/** The schemas that depend on the kinds with backups. */
export function backupSchemas(kinds: BackupKindField[]) {
  const types = [...new Set(kinds.flatMap(k => k.engines ?? [k.kind]))];
  const DatabaseType = Type.Union(types.map(t => Type.Literal(t)));
  const backupTypes = [...new Set(['database', ...kinds.map(k => k.backupType ?? 'database')])];
  const BackupType = Type.Union(
    backupTypes.map(t => Type.Literal(t)),
    { description: '"database": a database record of its kind; a kind running databases in its services (compose): the engine in serviceName is databaseType' },
  );
  /** What a backup may be of: a kind's database, or Berth's own data ("web-server", as the peer names it). */
  const BackupOf = Type.Union([...types, WEB_SERVER].map(t => Type.Literal(t)));
  const idInputs = Object.fromEntries(kinds.map(k => [k.idField, Type.Optional(Nullable(Type.String({ maxLength: 64 })))]));
  const idViews: Record<string, TSchema> = Object.fromEntries([...kinds.map(k => k.idField), ...unregisteredOwnerIds(kinds)].map(f => [f, Nullable(Type.String())]));
  const CreateInput = Type.Object({
    ...BackupFields.properties,
    ...idInputs,
    databaseType: BackupOf,
    userId: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    backupType: Type.Optional(BackupType),
  });
  const UpdateInput = Type.Object({ ...BackupFields.properties, backupId: Id, databaseType: Type.Optional(BackupOf) });
  const BackupView = Type.Object({
    backupId: Type.String(),
    appName: Type.String(),
    schedule: Type.String(),
    enabled: Nullable(Type.Boolean()),
    database: Type.String(),
    prefix: Type.String(),
    serviceName: Nullable(Type.String()),
    destinationId: Type.String(),
    keepLatestCount: Nullable(Type.Number()),
    backupType: Type.String(),
    databaseType: Type.String(),
    ...idViews,
    userId: Nullable(Type.String()),
    metadata: Nullable(Type.Any()),
    destination: Type.Omit(DestinationView, ['accessKey', 'secretAccessKey'], { description: 'the destination, without its keys' }),
    encrypted: Type.Boolean({ description: 'Berth: whether its files are encrypted' }),
    lastRunAt: Nullable(Timestamp()),
    lastError: Nullable(Type.String({ description: 'Berth: why the last run failed; null after a success' })),
    missedWindows: Type.Integer({ description: 'Berth: scheduled windows that passed without a run' }),
    lastMissedAt: Nullable(Timestamp()),
  });
  const RestoreInput = Type.Object({
    databaseId: Id,
    databaseType: DatabaseType,
    backupType: Type.Optional(BackupType),
    databaseName: Type.String({ minLength: 1, maxLength: 255, description: 'the database to restore into; one that does not exist yet is created (where the kind has named databases)' }),
    backupFile: Type.String({ minLength: 1, maxLength: 1024 }),
    destinationId: Id,
    metadata: Type.Optional(
      Type.Any({ description: "for the backup of a service of a stack: { serviceName } names the service (databaseId is the stack's id); the credentials are read from the service's container" }),
    ),
    encryptionKey: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "Berth: the passphrase of an encrypted file Berth has no record of (otherwise its backup's own is used)" })),
  });
  return { CreateInput, UpdateInput, BackupView, RestoreInput };
}

export type DestinationInputT = Static<typeof DestinationInput>;
export type DestinationViewT = Static<typeof DestinationView>;
export type BackupFileViewT = Static<typeof BackupFileView>;
export type BackupCreate = Static<typeof BackupFields> & { backupType?: string; databaseType: string; userId?: string | null; [idField: string]: unknown };
export type BackupUpdate = Static<typeof BackupFields> & { backupId: string; databaseType?: string };
export interface RestoreRequest {
  databaseId: string;
  databaseType: string;
  backupType?: string;
  databaseName: string;
  backupFile: string;
  destinationId: string;
  encryptionKey?: string;
  metadata?: unknown;
}
