// The cleanup plugin: settings.clean* and updateDockerCleanup (host care on this machine or a
// server), each cleanup a deployment of the host with its report as the log, and the daily cleanup
// of each host with enableDockerCleanup at cleanupCron; what a host is made of (disk usage, the
// infrastructure's health, GPUs) and the proxy's access log cleanup on its schedule.
import { asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { cleanupEntities } from './entities.ts';
import { cleanupMigrations } from './migrations.ts';
import { AccessLogCleanupService } from './access-log-cleanup.ts';
import { hostProcedures } from './host-procedures.ts';
import { cleanupProcedures } from './procedures.ts';
import { CLEANUP_TARGET, CleanupService, TICK_JOB } from './service.ts';

export { CleanupService, CLEANUP_TARGET, DAILY, OPERATIONS, THIS_MACHINE, TICK_JOB } from './service.ts';
export { AccessLogCleanupService, DEFAULT_LOG_CLEANUP_CRON, KEPT_LINES } from './access-log-cleanup.ts';
export { diskUsageRows, humanSize, nodeGpus, parseNvidiaSmi } from './host-status.ts';

export default definePlugin({
  name: 'cleanup',
  version: pkg.version,
  config,
  dependencies: ['hosts', 'deployment', 'workloads', 'server'],
  uses: ['domain', 'rollback'], // when enabled (optionalService): the domain plugin's access log; the rollback plugin's kept releases, whose images stay
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const cleanup = new CleanupService(cradle, { cron: () => berth.config.cleanupCron, thisMachine: () => berth.config.cleanupThisMachine });
    berth.entities(...cleanupEntities);
    berth.migrations(...cleanupMigrations);
    const accessLogCleanup = new AccessLogCleanupService(cradle);
    berth.provide({ cleanup: asValue(cleanup), accessLogCleanup: asValue(accessLogCleanup) });
    cradle().deployments.registerTarget({ type: CLEANUP_TARGET, idField: 'serverId' });
    cradle().deployments.register(cleanup);
    berth.procedures(...cleanupProcedures, ...hostProcedures);
    berth.jobs.define(
      TICK_JOB,
      async () => {
        await cleanup.tick();
        await accessLogCleanup.tick();
      },
      { concurrency: 1, lockLifetimeMs: 30_000 },
    );
    if (berth.config.jobs) berth.jobs.every(`${berth.config.cleanupTickSeconds} seconds`, TICK_JOB);
  },
});
