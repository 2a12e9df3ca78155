import { asClass, asValue, definePlugin, ownerColumn } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { Schedule, scheduleEntities } from './entities.ts';
import { scheduleMigrations } from './migrations.ts';
import { scheduleProcedures } from './procedures.ts';
import { ScheduleRequests } from './requests.ts';
import { ScheduleDeployer } from './runner.ts';
import { SCHEDULE_TARGET, ScheduleStore } from './service.ts';
import { ScheduleTicker } from './ticker.ts';

export default definePlugin({
  name: 'schedule',
  version: pkg.version,
  config,
  dependencies: ['workloads', 'deployment'],
  uses: ['server'], // used when enabled (optionalService)
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const store = new ScheduleStore(cradle);
    berth.entities(...scheduleEntities);
    berth.migrations(...scheduleMigrations);
    // A member given some services reaches a workload's schedule through the workload; a server's or
    // this machine's has no service (servers are not checked one by one: serverId is not either).
    berth.recordOwners({ scheduleId: { what: 'Schedule', owner: ownerColumn(Schedule, 'scheduleId', 'serviceId') } });
    cradle().deployments.registerTarget({ type: SCHEDULE_TARGET, idField: 'scheduleId' });
    cradle().deployments.register(new ScheduleDeployer({ cradle, store, events: () => berth.events }));
    const ticker = new ScheduleTicker({ store, cradle, em: () => cradle().orm.em.fork(), logger: () => cradle().logger });
    ticker.define(berth.jobs, berth.config.scheduleTickSeconds);
    // A removed workload or server takes its schedules (the kit and the server plugin call it).
    berth.provide({ scheduleStore: asValue(store), scheduleDirectory: asValue(store), scheduleRequests: asClass(ScheduleRequests).scoped() });
    berth.procedures(scheduleProcedures(store, cradle));
  },
});
