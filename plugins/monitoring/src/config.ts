// The monitoring plugin's configuration keys (section "monitoring"): how runtime health reads the
// engine's events. The sampling itself follows each host's metricsConfig.
import { Type, type Static } from '@berth/core';

const MonitoringConfig = Type.Object({
  monitoringCrashLoopExits: Type.Integer({
    env: 'BERTH_MONITORING_CRASH_LOOP_EXITS',
    minimum: 2,
    maximum: 100,
    default: 3,
    description: "Exits of a workload's tasks within monitoringCrashLoopSeconds that make a crash loop (an appHealth event)",
  }),
  monitoringCrashLoopSeconds: Type.Integer({
    env: 'BERTH_MONITORING_CRASH_LOOP_SECONDS',
    minimum: 10,
    maximum: 86_400,
    default: 300,
    description: 'The window in which monitoringCrashLoopExits exits make a crash loop',
  }),
  monitoringRecoverySeconds: Type.Integer({
    env: 'BERTH_MONITORING_RECOVERY_SECONDS',
    minimum: 1,
    maximum: 86_400,
    default: 120,
    description: "How long a workload's tasks run without exiting (or failing their health check) before it counts as recovered",
  }),
});
export default MonitoringConfig;
export type MonitoringSettings = Static<typeof MonitoringConfig>;

declare module '@berth/core' {
  interface BerthConfig extends MonitoringSettings {}
}
