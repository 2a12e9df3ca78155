import { asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { backupEntities } from './entities.ts';
import { backupMigrations } from './migrations.ts';
import { backupProcedures, destinationProcedures } from './procedures.ts';
import { DestinationService } from './destinations.ts';
import { BackupRunner } from './runner.ts';
import { BackupService, RESTORE_TARGET } from './service.ts';
import { RestoreDeployer } from './restore-deployer.ts';
import { BackupSchedules } from './schedules.ts';

export default definePlugin({
  name: 'backups',
  version: pkg.version,
  dependencies: ['workloads', 'deployment'],
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const destinations = new DestinationService(() => cradle().providers, () => cradle().secrets);
    const runner = new BackupRunner({ workloads: () => cradle().workloads, destinations, events: () => berth.events, logger: () => cradle().logger, secrets: () => cradle().secrets, verify: () => berth.config.backupVerify === 'always' });
    const backups = new BackupService({ workloads: () => cradle().workloads, destinations, runner, deployments: () => cradle().deployments, secrets: () => cradle().secrets });
    const schedules = new BackupSchedules({ runner, em: () => cradle().orm.em.fork(), events: () => berth.events, logger: () => cradle().logger });
    berth.entities(...backupEntities);
    berth.migrations(...backupMigrations);
    cradle().deployments.registerTarget({ type: RESTORE_TARGET, idField: 'restoreId' });
    cradle().deployments.register(new RestoreDeployer(runner));
    schedules.define(berth.jobs, berth.config.backupTickSeconds);
    berth.provide({ backupDirectory: asValue(backups) });
    berth.procedures(...destinationProcedures(destinations));
    berth.procedures(backupProcedures(backups));
  },
});
