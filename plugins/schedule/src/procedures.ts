// schedule.* — the peer's create, update, delete, list, one and runManually. Made once every
// plugin is set up: the workload kinds give the `<kind>Id` fields and relations, the server and
// deployment plugins the shapes of a schedule's server and runs.
import { Type, optionalService, router, schema, type Cradle, type Procedure } from '@berth/core';
import { NotServedOne } from '@berth/plugin-workloads';
import type { ScheduleStore } from './service.ts';
import { ListInput, RunAnswer, ScheduleId, scheduleSchemas, type ScheduleCreate, type ScheduleUpdate } from './schemas.ts';

const schedule = router('schedule', 'organization');

export const scheduleProcedures = (store: ScheduleStore, cradle: () => Cradle) => (): Procedure[] => {
  const servers = optionalService(cradle(), 'workloadServers');
  const s = scheduleSchemas(store.workloadTypes(), { server: servers ? schema.Nullable(servers.relationSchema()) : NotServedOne('the server'), deployment: cradle().deployments.viewSchema() });
  return [
    schedule.mutation('create', {
      permission: 'schedule.create',
      summary: "Schedule a command in a workload's container, or a script on a server of the organization or on this machine",
      description:
        "scheduleType application/compose: the command runs with shellType -c inside a running container of the workload (serviceName picks a stack's service). server: the script (or, when empty, the command) runs over SSH as the server's login; owners and admins only. dokploy-server: on Berth's own machine; the instance's operators only, and only while the config key hostAccess.hostSchedules allows it (403 naming it otherwise). Every record an id field names must be the organization's. Each run is a deployment of the schedule (deployment.allByType type schedule); a failed run emits scheduleFailed.",
      input: s.Create,
      output: s.View,
      handler: (input, ctx) => ctx.cradle.scheduleRequests.create(input as ScheduleCreate),
    }),
    schedule.mutation('update', {
      permission: 'schedule.update',
      summary: 'Change a schedule (its times are counted afresh from now when its cron expression or timezone changes, or it is switched on)',
      input: s.Update,
      output: s.View,
      handler: (input, ctx) => ctx.cradle.scheduleRequests.update(input as ScheduleUpdate),
    }),
    schedule.mutation('delete', {
      permission: 'schedule.delete',
      summary: 'Delete a schedule and its runs (a run going is stopped)',
      input: ScheduleId,
      output: Type.Boolean(),
      handler: ({ scheduleId }, ctx) => ctx.cradle.scheduleRequests.delete(scheduleId),
    }),
    schedule.query('list', {
      permission: 'schedule.read',
      summary: "The schedules of a workload or server of the organization (id), or the organization's on this machine (dokploy-server), oldest first, each with its runs",
      input: ListInput,
      output: Type.Array(s.ListItem),
      handler: (input, ctx) => ctx.cradle.scheduleRequests.list(input),
    }),
    schedule.query('one', {
      permission: 'schedule.read',
      summary: "A schedule, with its workload (and the workload's environment and project) or its server",
      input: ScheduleId,
      output: s.One,
      handler: ({ scheduleId }, ctx) => ctx.cradle.scheduleRequests.one(scheduleId),
    }),
    schedule.mutation('runManually', {
      permission: 'schedule.create',
      summary: 'Run a schedule now, as a deployment of it; answers once the run ended: done or error, with the deployment and its log',
      input: ScheduleId,
      output: RunAnswer,
      handler: ({ scheduleId }, ctx) => ctx.cradle.scheduleRequests.runManually(scheduleId),
    }),
  ];
};
