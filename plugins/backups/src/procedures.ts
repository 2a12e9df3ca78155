// destination.* and backup.* — made once every plugin is set up: the kinds with backups give
// the backup's `<kind>Id` fields, databaseType's values and the manualBackup<Kind> operations.
import { Type, router, type Procedure } from '@berth/core';
import { asCaller, inOrganization } from './in-organization.ts';
import type { BackupService } from './service.ts';
import type { DestinationService } from './destinations.ts';
import {
  BackupFileView,
  BackupId,
  ConnectionResult,
  DestinationId,
  DestinationInput,
  DestinationUpdate,
  DestinationView,
  ListFilesInput,
  RestoreAnswer,
  backupSchemas,
  type BackupCreate,
  type BackupUpdate,
} from './schemas.ts';

const destination = router('destination', 'organization');
const backup = router('backup', 'organization');

export const destinationProcedures = (destinations: DestinationService): Procedure[] => [
  destination.mutation('create', {
    permission: 'destination.create',
    summary: 'Add a destination: a bucket of an S3-compatible service, or (provider "local") a directory below the backup root',
    input: DestinationInput,
    output: DestinationView,
    handler: inOrganization((input, organizationId, em) => destinations.create(input, organizationId, em)),
  }),
  destination.mutation('testConnection', {
    permission: 'destination.create',
    summary: 'Write, read back and delete a small object; a 400 names what failed (endpoint, auth, bucket)',
    input: DestinationInput,
    output: ConnectionResult,
    handler: inOrganization((input, organizationId) => destinations.testConnection(input, organizationId)),
  }),
  destination.query('one', {
    permission: 'destination.read',
    summary: 'A destination of the organization, with its secret',
    input: DestinationId,
    output: DestinationView,
    handler: inOrganization(async ({ destinationId }, organizationId, em) => destinations.view(await destinations.row(destinationId, organizationId, em))),
  }),
  destination.query('all', {
    permission: 'destination.read',
    summary: "The organization's destinations (secrets left out)",
    input: Type.Object({}),
    output: Type.Array(DestinationView),
    handler: inOrganization((_i, organizationId, em) => destinations.all(organizationId, em)),
  }),
  destination.mutation('update', {
    permission: 'destination.create',
    summary: 'Change a destination',
    input: DestinationUpdate,
    output: DestinationView,
    handler: inOrganization((input, organizationId, em) => destinations.update(input, organizationId, em)),
  }),
  destination.mutation('remove', {
    permission: 'destination.delete',
    summary: 'Delete a destination and its backups (their files stay in the bucket)',
    input: DestinationId,
    output: DestinationView,
    handler: inOrganization(({ destinationId }, organizationId, em) => destinations.remove(destinationId, organizationId, em)),
  }),
];

export const backupProcedures = (backups: BackupService) => (): Procedure[] => {
  const kinds = backups.kinds();
  const { CreateInput, UpdateInput, RestoreInput } = backupSchemas(backups.schemaKinds());
  const BackupView = backups.oneSchema();
  return [
    backup.mutation('create', {
      permission: 'backup.create',
      summary: 'Schedule backups of a database to a destination; databaseType "web-server" (no database id): Berth\'s own data, the instance owner\'s alone',
      description:
        "A web-server backup is Berth's database and its data directory's keys as one archive encrypted with the operator's passphrase (config key backupPassphrase): 409 while it is not set, 403 naming databaseType for anyone but the instance owner. `berth restore` brings an instance back from it.",
      input: CreateInput,
      output: BackupView,
      handler: asCaller((input, principal, em) => backups.create(input as BackupCreate, principal, em)),
    }),
    backup.query('one', {
      permission: 'backup.read',
      summary: "A backup of the organization, with its destination, its last run and its database's record (under the kind's name: postgres, mysql...)",
      input: BackupId,
      output: backups.withDatabaseSchema(),
      handler: inOrganization(({ backupId }, organizationId, em) => backups.one(backupId, organizationId, em)),
    }),
    backup.mutation('update', {
      permission: 'backup.update',
      summary: "Change a backup's schedule, prefix, destination, database or retention",
      input: UpdateInput,
      output: BackupView,
      handler: asCaller((input, principal, em) => backups.update(input as BackupUpdate, principal, em)),
    }),
    backup.mutation('remove', {
      permission: 'backup.delete',
      summary: 'Delete a backup (its files stay in the destination)',
      input: BackupId,
      output: BackupView,
      handler: inOrganization(({ backupId }, organizationId, em) => backups.remove(backupId, organizationId, em)),
    }),
    ...kinds.map(k =>
      backup.mutation(`manualBackup${k.backups!.procedureSuffix}`, {
        permission: 'backup.create',
        summary: `Back up the ${k.label} ${k.backups!.backupType ? "service's database" : 'database'} now: dump, gzip, upload, read back; true once the file is stored whole`,
        input: BackupId,
        output: Type.Boolean(),
        handler: inOrganization(({ backupId }, organizationId, em) => backups.manual(backupId, k.kind, organizationId, em)),
      }),
    ),
    backup.mutation('manualBackupWebServer', {
      permission: 'backup.create',
      summary: "Back up Berth's own data now (its database and the data directory's keys, encrypted with the operator's passphrase): true once the archive is stored and reads back whole",
      description:
        "The instance's operators' alone (403 naming backupId for others); 409 while the config key backupPassphrase is not set. Runs as a deployment of the backup (deployment.allByType), with retention and the databaseBackup event like the others.",
      input: BackupId,
      output: Type.Boolean(),
      handler: asCaller(({ backupId }, principal, em) => backups.manualWebServer(backupId, principal, em)),
    }),
    backup.query('listBackupFiles', {
      permission: 'backup.read',
      summary: 'The files and folders below the folder of `search` whose path contains its last part (100 at most), with the checksum Berth recorded',
      input: ListFilesInput,
      output: Type.Array(BackupFileView),
      handler: inOrganization((input, organizationId, em) => backups.listFiles(input, organizationId, em)),
    }),
    backup.mutation('restoreBackup', {
      permission: 'backup.restore',
      summary: 'Restore a backup file into a database, as a queued job with a log; answers the job',
      description:
        "The file is checked against the checksum recorded when Berth wrote it, then streamed through gunzip into the database's restore program. Follow it with deployment.one / the deployment log.",
      input: RestoreInput,
      output: RestoreAnswer,
      handler: inOrganization((input, organizationId, em) => backups.restore(input, organizationId, em)),
    }),
  ];
};
