// The monitoring plugin: the collector (no agent), runtime health from the engines' events, and
// the peer's monitoring operations answered from Berth's own store.
import { asValue, definePlugin } from '@berth/core';
import type {} from '@berth/plugin-server';
import type { MetricsTokenDirectory } from '@berth/plugin-notification';
import pkg from '../package.json' with { type: 'json' };
import { Collector } from './collector.ts';
import config from './config.ts';
import { HealthWatch } from './health.ts';
import { monitoringMigrations } from './migrations.ts';
import { metricsRoute, RequestCounter } from './prometheus.ts';
import { monitoringProcedures } from './procedures.ts';
import { MonitoringService, monitoredServerTokens } from './service.ts';
import { MonitoringStore } from './store.ts';

export { ThresholdWatch } from './thresholds.ts';
export * as readings from './readings.ts';

export default definePlugin({
  name: 'monitoring',
  version: pkg.version,
  config,
  dependencies: ['hosts', 'server'],
  setup(berth) {
    const cradle = () => berth.container.cradle;
    // cast: the store takes the core's EntityManager type; a fork of the ORM's is one.
    const store = new MonitoringStore(() => cradle().orm.em.fork() as never);
    const collector = new Collector(cradle, store);
    const health = new HealthWatch(cradle, store, {
      crashLoopExits: berth.config.monitoringCrashLoopExits,
      crashLoopMs: berth.config.monitoringCrashLoopSeconds * 1000,
      recoveryMs: berth.config.monitoringRecoverySeconds * 1000,
    });
    berth.migrations(...monitoringMigrations);
    berth.provide({
      monitoring: asValue(new MonitoringService(cradle, store, collector, health)),
      monitoringCollector: asValue(collector),
      // notification.receiveNotification: a peer agent's report, with the token of a server set up here.
      metricsTokens: asValue({ all: em => monitoredServerTokens(cradle(), store, em) } satisfies MetricsTokenDirectory),
    });
    berth.procedures(monitoringProcedures(() => cradle().servers.relationSchema()));
    berth.http(metricsRoute(berth, store, new RequestCounter()));
    berth.http(app => {
      app.addHook('onClose', async () => {
        collector.stop();
        health.stop();
      });
    });
    berth.onStart(() => {
      if (!berth.config.jobs) return;
      void collector.start().catch(e => cradle().logger.warn({ err: e }, 'monitoring: the collector did not start'));
      void health.start().catch(e => cradle().logger.warn({ err: e }, 'monitoring: runtime health did not start'));
    });
  },
});

declare module '@berth/core' {
  interface Cradle {
    /** The monitoring operations; from the monitoring plugin. */
    monitoring: MonitoringService;
    /** The collector of host and container samples; from the monitoring plugin. */
    monitoringCollector: Collector;
  }
}
