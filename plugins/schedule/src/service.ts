// The schedules as every part of the plugin needs them, whoever asks: their wire views and
// relations, where each runs (its workload's host, its server, this machine), its runs as
// deployments of the schedule target (queued, or queued and waited for), and their removal with
// their workload or server (the kit's scheduleDirectory seam). The caller's checks are requests.ts'.
import { CronExpressionParser, type CronExpressionOptions } from 'cron-parser';
import { badRequest, iso, notFound, optionalService, WIRE_STATUS, type Cradle, type DeploymentRecord, type EnqueueRequest, type EntityManager } from '@berth/core';
import { placementOf, serverRelation, type WorkloadRef } from '@berth/plugin-workloads';
import { Schedule, type ScheduleRow } from './entities.ts';
import { SERVER_TYPE, WORKLOAD_TYPES, type RunAnswerT, type ScheduleType, type ShellType, type WorkloadTypeField } from './schemas.ts';

/** The deployment target of a schedule's runs (deployment.allByType type "schedule", id scheduleId). */
export const SCHEDULE_TARGET = 'schedule';
/** A run's action: at its cron time, the one run that makes up for missed times, or asked for. */
export const RUN_ACTIONS = { scheduled: 'scheduled', catchUp: 'catchUp', manual: 'manual' } as const;
export type RunAction = (typeof RUN_ACTIONS)[keyof typeof RUN_ACTIONS];

/** The cron expression read in the timezone (UTC when none), or the problem with either. */
export function parseCron(expression: string, timezone: string | null, options: Omit<CronExpressionOptions, 'tz'> = {}) {
  return CronExpressionParser.parse(expression, { ...options, tz: timezone ?? 'UTC' });
}

/** A 400 naming cronExpression or timezone when the schedule could never run. */
export function checkWhen(cronExpression: string, timezone: string | null): void {
  if (timezone) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: timezone });
    } catch {
      throw badRequest(`timezone "${timezone}" is not an IANA timezone`, [{ path: ['timezone'], message: 'must be an IANA timezone, such as Europe/Paris or UTC' }]);
    }
  }
  const count = cronExpression.trim().split(/\s+/).length;
  let problem = count === 5 || count === 6 ? null : `must have 5 fields, or 6 with seconds first, not ${count}`;
  if (!problem) {
    try {
      parseCron(cronExpression, timezone);
    } catch (e) {
      problem = `is not a valid cron expression: ${(e as Error).message}`;
    }
  }
  if (problem) throw badRequest(`cronExpression ${problem}`, [{ path: ['cronExpression'], message: problem }]);
}

export class ScheduleStore {
  readonly #cradle: () => Cradle;

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
  }

  /** The peer's workload schedule types, each with the id field of the kind serving it here. */
  workloadTypes(): WorkloadTypeField[] {
    const { workloads } = this.#cradle();
    return WORKLOAD_TYPES.map(type => {
      const kind = workloads.kind(type);
      return { type, idField: kind?.idField ?? `${type}Id`, registered: Boolean(kind) };
    });
  }

  /** The schedule as the peer's row answers it. */
  view(row: ScheduleRow) {
    return {
      scheduleId: row.scheduleId,
      name: row.name,
      description: row.description ?? null,
      cronExpression: row.cronExpression,
      appName: row.appName,
      serviceName: row.serviceName ?? null,
      shellType: row.shellType as ShellType,
      scheduleType: row.scheduleType as ScheduleType,
      command: row.command,
      script: row.script ?? null,
      ...Object.fromEntries(this.workloadTypes().map(t => [t.idField, row.scheduleType === t.type ? (row.serviceId ?? null) : null])),
      serverId: row.scheduleType === SERVER_TYPE ? (row.serverId ?? null) : null,
      organizationId: row.organizationId,
      enabled: row.enabled,
      timezone: row.timezone ?? null,
      createdAt: iso(row.createdAt)!,
    };
  }

  /** The workload a workload schedule runs in (null for the other types, or when it is gone). */
  async workloadOf(row: ScheduleRow, em: EntityManager): Promise<WorkloadRef | null> {
    if (!WORKLOAD_TYPES.includes(row.scheduleType) || !row.serviceId) return null;
    const found = await this.#cradle().workloads.kind(row.scheduleType)?.find(row.serviceId, em);
    return found && found.organizationId === row.organizationId ? found : null;
  }

  /** What list and one join to each schedule: its workload (under its type), its server; with `environment`, the workload's environment and project. */
  async relations(row: ScheduleRow, em: EntityManager, environment: boolean): Promise<{ server: unknown; [type: string]: unknown }> {
    const cradle = this.#cradle();
    const workload = await this.workloadOf(row, em);
    const joined: Record<string, unknown> = Object.fromEntries(this.workloadTypes().map(t => [t.type, null]));
    if (workload) {
      const kind = cradle.workloads.kind(workload.kind)!;
      joined[row.scheduleType] = {
        [kind.idField]: workload.id,
        appName: workload.appName,
        name: workload.name,
        serverId: workload.serverId,
        ...(environment ? { environment: await placementOf(cradle, workload.environmentId, row.organizationId, em) } : {}),
      };
    }
    return { ...joined, server: row.scheduleType === SERVER_TYPE ? await serverRelation(cradle, row.serverId, row.organizationId, em) : null };
  }

  /** Each schedule's runs, newest first, as deployment.* answers them. */
  async runsOf(rows: ScheduleRow[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>> {
    const { deployments } = this.#cradle();
    const records = await deployments.listFor(
      SCHEDULE_TARGET,
      rows.map(r => r.scheduleId),
      em,
    );
    return new Map([...records].map(([id, list]) => [id, deployments.views(list)]));
  }

  /**
   * The host a run happens on (null: this machine): its workload's, its server, or this machine.
   * NOT_FOUND naming it when what it runs in is gone.
   */
  async hostOf(row: ScheduleRow, em: EntityManager): Promise<string | null> {
    if (WORKLOAD_TYPES.includes(row.scheduleType)) {
      const workload = await this.workloadOf(row, em);
      if (!workload) throw notFound(`The ${this.#cradle().workloads.kind(row.scheduleType)?.label ?? row.scheduleType} this schedule runs in`);
      return workload.serverId;
    }
    if (row.scheduleType === SERVER_TYPE) {
      const owner = row.serverId ? await optionalService(this.#cradle(), 'workloadServers')?.organizationOf(row.serverId) : null;
      if (!row.serverId || owner !== row.organizationId) throw notFound('The server this schedule runs on');
      return row.serverId;
    }
    return null;
  }

  /** The deployment of one run. */
  async request(row: ScheduleRow, action: RunAction, description: string | null, em: EntityManager): Promise<EnqueueRequest> {
    return {
      targetType: SCHEDULE_TARGET,
      targetId: row.scheduleId,
      organizationId: row.organizationId,
      serverId: await this.hostOf(row, em),
      action,
      title: 'Schedule',
      description: description ?? row.name,
    };
  }

  /** Whether a run of the schedule waits in the queue already (another one would only wait behind it). */
  async waiting(row: ScheduleRow, em: EntityManager): Promise<boolean> {
    const runs = (await this.#cradle().deployments.listFor(SCHEDULE_TARGET, [row.scheduleId], em)).get(row.scheduleId) ?? [];
    return runs.some(r => r.state === 'queued');
  }

  /** Runs the schedule now and answers once the run ended (as the peer's runManually answers). */
  async runToEnd(row: ScheduleRow, em: EntityManager): Promise<RunAnswerT> {
    const { deployments, events } = this.#cradle();
    const ended = new Map<string, DeploymentRecord>();
    let wake: () => void = () => {};
    // Listening before it is queued: a quick run may end before enqueue answers.
    const off = events.on('deploymentFinished', ({ deployment }) => {
      if (deployment.targetType !== SCHEDULE_TARGET) return;
      ended.set(deployment.deploymentId, deployment);
      wake();
    });
    try {
      const queued = await deployments.enqueue(await this.request(row, RUN_ACTIONS.manual, `${row.name} (run manually)`, em), em);
      while (!ended.has(queued.deploymentId))
        await new Promise<void>(resolve => {
          wake = resolve;
        });
      const done = ended.get(queued.deploymentId)!;
      return { status: WIRE_STATUS[done.state] === 'done' ? 'done' : 'error', deploymentId: done.deploymentId, logPath: done.logPath };
    } finally {
      off();
    }
  }

  /** Deletes the schedule and its runs (a run going is stopped). */
  async remove(row: ScheduleRow, em: EntityManager): Promise<void> {
    await this.#cradle().deployments.removeFor(SCHEDULE_TARGET, row.scheduleId, em, { includeActive: true });
    await em.nativeDelete(Schedule, { scheduleId: row.scheduleId });
  }

  /** The schedules of a removed workload go with it (the kit calls this). */
  async removeForWorkload(kind: string, id: string, em: EntityManager): Promise<void> {
    for (const row of await em.find(Schedule, { scheduleType: kind, serviceId: id })) await this.remove(row, em);
  }

  /** The schedules of a removed server go with it (the server plugin calls this). */
  async removeForServer(serverId: string, em: EntityManager): Promise<void> {
    for (const row of await em.find(Schedule, { scheduleType: SERVER_TYPE, serverId })) await this.remove(row, em);
  }
}
