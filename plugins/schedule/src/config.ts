// The schedule plugin's configuration keys (section "schedule"). Whether schedules may run on this
// machine is the operator's host access policy (hostAccess.hostSchedules, the workloads section).
import { Type, type Static } from '@berth/core';

const ScheduleConfig = Type.Object({
  scheduleTickSeconds: Type.Integer({
    env: 'BERTH_SCHEDULE_TICK',
    minimum: 1,
    maximum: 3600,
    default: 10,
    description:
      'How often schedules are checked; a schedule runs at the first check after its cron time, and one whose times passed more than two checks ago without a run (Berth was not running) runs once as a catch-up',
  }),
});
export default ScheduleConfig;
export type ScheduleSettings = Static<typeof ScheduleConfig>;

declare module '@berth/core' {
  interface BerthConfig extends ScheduleSettings {}
}
