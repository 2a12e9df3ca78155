// A schedule: what runs (a command in a workload's container, or a script on a host), where, and
// when (a cron expression in a timezone). The workload and server tables belong to other plugins:
// no foreign key to them; a schedule goes with its workload or server through their removal
// (the kit's scheduleDirectory seam), with its organization by the foreign key.
import { columns, defineEntity, p } from '@berth/core';

export const Schedule = defineEntity({
  name: 'Schedule',
  tableName: 'schedules',
  properties: {
    scheduleId: columns.primaryId(),
    name: p.text(),
    description: p.text().nullable(),
    cronExpression: p.text(),
    /** Berth's name for the schedule (the peer's: its script's directory on the host); never reaches a host here. */
    appName: p.string().length(64),
    /** The service of a stack whose container runs the command (null: the workload's only, or first, running container). */
    serviceName: p.text().nullable(),
    shellType: p.string().length(8),
    /** The peer's scheduleType: a workload kind's wire name, "server" or "dokploy-server". */
    scheduleType: p.string().length(32),
    command: p.text(),
    script: p.text().nullable(),
    /** The workload whose container runs the command (workload schedules). */
    serviceId: p.string().length(64).nullable().index(),
    /** The server whose login runs the script (server schedules). */
    serverId: p.string().length(64).nullable().index(),
    organizationId: columns.berthId().index(),
    enabled: p.boolean(),
    timezone: p.string().length(64).nullable(),
    createdAt: columns.createdAt(),
    /** The latest cron time handled (a run queued for it, or skipped); the next is the first after it. */
    lastRunAt: p.datetime().nullable(),
  },
});

export type ScheduleRow = InstanceType<typeof Schedule.class>;
export const scheduleEntities = [Schedule];
