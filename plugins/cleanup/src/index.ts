// The cleanup plugin: settings.clean* and updateDockerCleanup (host care on this machine or a
// server), each cleanup a deployment of the host with its report as the log, and the daily cleanup
// of each host with enableDockerCleanup at cleanupCron.
import { asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { cleanupEntities } from './entities.ts';
import { cleanupMigrations } from './migrations.ts';
import { cleanupProcedures } from './procedures.ts';
import { CLEANUP_TARGET, CleanupService, TICK_JOB } from './service.ts';

export { CleanupService, CLEANUP_TARGET, DAILY, OPERATIONS, THIS_MACHINE, TICK_JOB } from './service.ts';

export default definePlugin({
  name: 'cleanup',
  version: pkg.version,
  config,
  dependencies: ['hosts', 'deployment', 'workloads', 'server'],
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const cleanup = new CleanupService(cradle, { cron: () => berth.config.cleanupCron, thisMachine: () => berth.config.cleanupThisMachine });
    berth.entities(...cleanupEntities);
    berth.migrations(...cleanupMigrations);
    berth.provide({ cleanup: asValue(cleanup) });
    cradle().deployments.registerTarget({ type: CLEANUP_TARGET, idField: 'serverId' });
    cradle().deployments.register(cleanup);
    berth.procedures(...cleanupProcedures);
    berth.jobs.define(
      TICK_JOB,
      async () => {
        await cleanup.tick();
      },
      { concurrency: 1, lockLifetimeMs: 30_000 },
    );
    if (berth.config.jobs) berth.jobs.every(`${berth.config.cleanupTickSeconds} seconds`, TICK_JOB);
  },
});
