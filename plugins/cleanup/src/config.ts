// The cleanup plugin's configuration keys (section "cleanup").
import { Type, type Static } from '@berth/core';

const CleanupConfig = Type.Object({
  cleanupCron: Type.String({
    env: 'BERTH_CLEANUP_CRON',
    minLength: 9,
    maxLength: 100,
    default: '50 23 * * *',
    description: 'When the daily cleanup runs (cron, UTC) on this machine and on each server with enableDockerCleanup',
  }),
  cleanupThisMachine: Type.Boolean({
    env: 'BERTH_CLEANUP_THIS_MACHINE',
    default: true,
    description:
      "Whether cleanups (and the daily cleanup) may remove anything on Berth's own machine; false: only servers are cleaned, a dry run of this machine still answers (the test servers set it false: their engine is shared)",
  }),
  cleanupTickSeconds: Type.Integer({ env: 'BERTH_CLEANUP_TICK_SECONDS', minimum: 5, maximum: 3600, default: 60, description: 'Seconds between two checks of whether a daily cleanup is due' }),
});
export default CleanupConfig;
export type CleanupSettings = Static<typeof CleanupConfig>;

declare module '@berth/core' {
  interface BerthConfig extends CleanupSettings {}
}
