import { asValue, definePlugin, ownerColumn, type EntityManager, type TSchema } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { Backup, Restore, VolumeBackup, VolumeRestore, backupEntities, type BackupRow, type VolumeBackupRow } from './entities.ts';
import { backupMigrations } from './migrations.ts';
import { backupProcedures, destinationProcedures } from './procedures.ts';
import { DestinationService } from './destinations.ts';
import { BackupRunner } from './runner.ts';
import { BACKUP_TARGET, BackupService, RESTORE_TARGET } from './service.ts';
import { BackupRunDeployer, RestoreDeployer } from './deployers.ts';
import { VerifySchedule } from './verify-schedule.ts';
import { BackupSchedules } from './schedules.ts';
import { VolumeRunner } from './volume-runner.ts';
import { VOLUME_BACKUP_TARGET, VolumeBackupService } from './volume-backups.ts';
import { volumeBackupProcedures } from './volume-procedures.ts';
import { OwnDataArchiver } from './own-data/archiver.ts';
import { restoreCommand } from './own-data/restore.ts';
import { dbCommand } from './own-data/copy.ts';

export default definePlugin({
  name: 'backups',
  version: pkg.version,
  config,
  commands: [dbCommand, restoreCommand],
  dependencies: ['workloads', 'deployment'],
  setup(berth) {
    const cradle = () => berth.container.cradle;
    // Berth's own data (web-server backups): the platform's database and the operator's passphrase stay in here.
    const ownData = new OwnDataArchiver(cradle().database.pool, berth.config.dataDir, berth.config.backupPassphrase);
    const destinations = new DestinationService(
      () => cradle().providers,
      () => cradle().secrets,
      (serverId, organizationId) => cradle().workloads.assertServer(serverId, organizationId),
      () => cradle().outbound,
    );
    const runner = new BackupRunner({
      workloads: () => cradle().workloads,
      destinations,
      events: () => berth.events,
      logger: () => cradle().logger,
      secrets: () => cradle().secrets,
      verify: () => berth.config.backupVerify === 'always',
      ownData: () => ownData,
    });
    const backups = new BackupService({
      workloads: () => cradle().workloads,
      destinations,
      deployments: () => cradle().deployments,
      secrets: () => cradle().secrets,
      events: () => berth.events,
      accounts: () => cradle().accounts,
      ownData: () => ownData,
    });
    const volumeRunner = new VolumeRunner({ workloads: () => cradle().workloads, destinations, hosts: () => cradle().hosts, events: () => berth.events, image: () => berth.config.backupHelperImage });
    const volumes = new VolumeBackupService({
      workloads: () => cradle().workloads,
      destinations,
      deployments: () => cradle().deployments,
      events: () => berth.events,
      environments: () => cradle().environments,
    });
    const schedules = new BackupSchedules({ run: (row, em) => backups.runScheduled(row, em), volumes, em: () => cradle().orm.em.fork(), events: () => berth.events, logger: () => cradle().logger });
    berth.entities(...backupEntities);
    berth.migrations(...backupMigrations);
    // A member given some services reaches a backup, a volume backup or a restore through its workload
    // (a web-server backup belongs to none: changing or running one is the instance operators' alone).
    // restoreBackup's databaseId is the workload itself; restoreId names no input, but a restore's
    // deployment is reached through it.
    const restoreOwner = ownerColumn(Restore, 'restoreId', 'databaseId');
    const volumeRestoreOwner = ownerColumn(VolumeRestore, 'restoreId', 'serviceId');
    berth.recordOwners({
      backupId: { what: 'Backup', owner: ownerColumn(Backup, 'backupId', 'databaseId') },
      volumeBackupId: { what: 'Volume backup', owner: ownerColumn(VolumeBackup, 'volumeBackupId', 'serviceId') },
      databaseId: { what: 'Service', owner: async id => ({ kind: 'services', id }) },
      restoreId: { what: 'Restore', owner: async (id, lookup) => (await restoreOwner(id, lookup)) ?? volumeRestoreOwner(id, lookup) },
    });
    cradle().deployments.registerTarget({ type: RESTORE_TARGET, idField: 'restoreId' });
    cradle().deployments.register(new RestoreDeployer(runner, volumeRunner));
    cradle().deployments.registerTarget({ type: BACKUP_TARGET, idField: 'backupId' });
    cradle().deployments.register(new BackupRunDeployer(BACKUP_TARGET, Backup, 'backupId', (row: BackupRow, run) => runner.run(row, run.em, line => run.log(line))));
    cradle().deployments.registerTarget({ type: VOLUME_BACKUP_TARGET, idField: 'volumeBackupId' });
    cradle().deployments.register(
      new BackupRunDeployer(VOLUME_BACKUP_TARGET, VolumeBackup, 'volumeBackupId', (row: VolumeBackupRow, run) => volumeRunner.run(row, run.em, { signal: run.signal, log: line => run.log(line) })),
    );
    schedules.define(berth.jobs, berth.config.backupTickSeconds);
    if (berth.config.backupVerify === 'schedule') {
      const verifications = new VerifySchedule({ runner, em: () => cradle().orm.em.fork(), events: () => berth.events, logger: () => cradle().logger, schedule: berth.config.backupVerifySchedule });
      verifications.define(berth.jobs, berth.config.backupTickSeconds);
      // Before the jobs and the database stop: the check under way is aborted, its file stays unchecked.
      berth.http(app => {
        app.addHook('onClose', async () => verifications.shutdown());
      });
    }
    // A removed workload takes its database and volume backups (their files stay in the destinations).
    const directory = {
      viewsFor: backups.viewsFor.bind(backups),
      viewSchema: backups.viewSchema.bind(backups),
      removeForWorkload: async (kind: string, id: string, em: Parameters<typeof backups.removeForWorkload>[2]) => {
        await backups.removeForWorkload(kind, id, em);
        await volumes.removeForWorkload(kind, id, em);
      },
    };
    // user.getBackups (the user plugin) lists the organization's web-server backups, as the peer's settings page reads them.
    const webServerBackups: WebServerBackups = { views: backups.webServerViews.bind(backups), viewSchema: backups.viewSchema.bind(backups) };
    berth.provide({ backupDirectory: asValue(directory), ownData: asValue(ownData), webServerBackups: asValue(webServerBackups) });
    berth.procedures(...destinationProcedures(destinations));
    berth.procedures(backupProcedures(backups));
    berth.procedures(volumeBackupProcedures(volumes));
  },
});

/** Registered as `webServerBackups`: an organization's backups of Berth's own data. */
export interface WebServerBackups {
  /** The organization's web-server backups with their runs (backup.one's fields), oldest first. */
  views(organizationId: string, em: EntityManager): Promise<Record<string, unknown>[]>;
  /** The schema of one of those views (made once every plugin is set up). */
  viewSchema(): TSchema;
}

declare module '@berth/core' {
  interface Cradle {
    /** From the backups plugin (absent when it is disabled). */
    webServerBackups: WebServerBackups;
  }
}
