// schedule.* for the caller (request-scoped): the organization's schedules only (another
// organization's is NOT_FOUND, never FORBIDDEN), every record an input names checked to be the
// organization's, and who may do what by the schedule's type — a workload's: any member; a
// server's or this machine's (a script run as a host's login): the organization's owner and
// admins (the peer's rule); this machine's besides: only the instance operators, and only while the
// config key hostAccess.hostSchedules allows it (403 naming the key).
import { BerthError, RequestScope, badRequest, findOwned, setOrNull, type Role } from '@berth/core';
import { generateAppName } from '@berth/plugin-workloads';
import { Schedule, type ScheduleRow } from './entities.ts';
import { thisMachineRefusal } from './runner.ts';
import { checkWhen, type ScheduleStore } from './service.ts';
import { SERVER_TYPE, THIS_MACHINE_TYPE, WORKLOAD_TYPES, type RunAnswerT, type ScheduleCreate, type ScheduleListInput, type ScheduleUpdate } from './schemas.ts';

/** What a schedule runs in, as resolved from an input. */
interface Target {
  scheduleType: string;
  serviceId: string | null;
  serverId: string | null;
}

/** A 403 naming the field. */
const refused = (field: string, message: string) => new BerthError('FORBIDDEN', `${field}: ${message}`, [{ path: [field], message: `${field}: ${message}` }]);

const isHostLevel = (type: string) => type === SERVER_TYPE || type === THIS_MACHINE_TYPE;

/** Registered asClass(...).scoped() as `scheduleRequests`. */
export class ScheduleRequests extends RequestScope {
  get #store(): ScheduleStore {
    return this.cradle.scheduleStore;
  }

  async create(input: ScheduleCreate) {
    const target = await this.#target(input, null);
    await this.#assertMayChange(target.scheduleType);
    const timezone = setOrNull(input.timezone ?? null);
    checkWhen(input.cronExpression, timezone);
    const row = this.em.create(Schedule, {
      name: input.name,
      description: setOrNull(input.description ?? null),
      cronExpression: input.cronExpression,
      appName: generateAppName(input.name, 'schedule'),
      serviceName: setOrNull(input.serviceName ?? null),
      shellType: input.shellType ?? 'bash',
      ...target,
      command: input.command,
      script: setOrNull(input.script ?? null),
      organizationId: this.organizationId,
      enabled: input.enabled ?? true,
      timezone,
      lastRunAt: null,
    }) as ScheduleRow;
    await this.em.flush();
    return this.#store.view(row);
  }

  async update(input: ScheduleUpdate) {
    const row = await this.#row(input.scheduleId);
    // Both the type it has and the one it gets are the caller's to manage.
    await this.#assertMayChange(row.scheduleType);
    const target = await this.#target(input, row);
    if (target.scheduleType !== row.scheduleType) await this.#assertMayChange(target.scheduleType);
    const timezone = input.timezone === undefined ? (row.timezone ?? null) : setOrNull(input.timezone);
    checkWhen(input.cronExpression, timezone);
    const enabled = input.enabled ?? row.enabled;
    // Times of another expression, or passed while it was off, are no missed runs: counted from now.
    if (input.cronExpression !== row.cronExpression || timezone !== (row.timezone ?? null) || (enabled && !row.enabled)) row.lastRunAt = new Date();
    Object.assign(row, {
      name: input.name,
      cronExpression: input.cronExpression,
      command: input.command,
      ...target,
      timezone,
      enabled,
      ...(input.description !== undefined ? { description: setOrNull(input.description) } : {}),
      ...(input.serviceName !== undefined ? { serviceName: setOrNull(input.serviceName) } : {}),
      ...(input.script !== undefined ? { script: setOrNull(input.script) } : {}),
      ...(input.shellType !== undefined ? { shellType: input.shellType } : {}),
    });
    await this.em.flush();
    return this.#store.view(row);
  }

  /** Deletes the schedule and its runs. The instance operators may delete one on this machine even once the policy no longer allows them. */
  async delete(scheduleId: string): Promise<true> {
    const row = await this.#row(scheduleId);
    await this.#assertMayChange(row.scheduleType, { policy: false });
    await this.#store.remove(row, this.em);
    return true;
  }

  async one(scheduleId: string) {
    const row = await this.#row(scheduleId);
    this.#assertMayRead(row.scheduleType);
    return { ...this.#store.view(row), ...(await this.#store.relations(row, this.em, true)) };
  }

  /** The schedules of a workload or server of the organization (or, for dokploy-server, the organization's on this machine), oldest first, each with its runs. */
  async list(input: ScheduleListInput) {
    const { scheduleType, id } = input;
    this.#assertMayRead(scheduleType);
    const where: Record<string, unknown> = { scheduleType, organizationId: this.organizationId };
    if (WORKLOAD_TYPES.includes(scheduleType)) {
      if (!this.cradle.workloads.kind(scheduleType))
        throw badRequest(`scheduleType "${scheduleType}": no such workload kind here`, [{ path: ['scheduleType'], message: 'no such workload kind here' }]);
      await this.cradle.workloads.owner(scheduleType, id, this.organizationId, this.em);
      where.serviceId = id;
    } else if (scheduleType === SERVER_TYPE) {
      await this.cradle.workloads.assertServer(id, this.organizationId);
      where.serverId = id;
    }
    const rows = await this.em.find(Schedule, where, { orderBy: { createdAt: 'asc', scheduleId: 'asc' } });
    const runs = await this.#store.runsOf(rows, this.em);
    return Promise.all(rows.map(async row => ({ ...this.#store.view(row), ...(await this.#store.relations(row, this.em, false)), deployments: runs.get(row.scheduleId) ?? [] })));
  }

  /** Runs the schedule now, as a deployment of it; answers once it ended, with how. */
  async runManually(scheduleId: string): Promise<RunAnswerT> {
    const row = await this.#row(scheduleId);
    await this.#assertMayChange(row.scheduleType);
    return this.#store.runToEnd(row, this.em);
  }

  #row(scheduleId: string): Promise<ScheduleRow> {
    return findOwned(this.em, Schedule, { scheduleId }, this.organizationId, 'Schedule');
  }

  /**
   * What the input runs in: every id it names checked to be the organization's first (NOT_FOUND
   * otherwise, whatever the type reads), then the type's own — given, or the record's when the
   * type does not change. The type is scheduleType, else the record's, else the one the ids name.
   */
  async #target(input: Record<string, unknown>, existing: ScheduleRow | null): Promise<Target> {
    const { workloads } = this.cradle;
    const given = (field: string) => (typeof input[field] === 'string' ? setOrNull(input[field]) : null);
    const types = this.#store.workloadTypes().filter(t => t.registered);
    for (const t of types) {
      const id = given(t.idField);
      if (id) await workloads.owner(t.type, id, this.organizationId, this.em);
    }
    const serverId = given('serverId');
    if (serverId) await workloads.assertServer(serverId, this.organizationId);
    const scheduleType = (input.scheduleType as string | undefined) ?? existing?.scheduleType ?? types.find(t => given(t.idField))?.type ?? (serverId ? SERVER_TYPE : WORKLOAD_TYPES[0]!);
    const kept = existing?.scheduleType === scheduleType ? existing : null;
    if (WORKLOAD_TYPES.includes(scheduleType)) {
      const t = types.find(x => x.type === scheduleType);
      if (!t) throw badRequest(`scheduleType "${scheduleType}": no such workload kind here`, [{ path: ['scheduleType'], message: 'no such workload kind here' }]);
      const id = given(t.idField) ?? kept?.serviceId ?? null;
      if (!id) throw badRequest(`${t.idField} is required for a ${scheduleType} schedule`, [{ path: [t.idField], message: `required: the ${scheduleType} whose container runs the command` }]);
      return { scheduleType, serviceId: id, serverId: null };
    }
    if (scheduleType === SERVER_TYPE) {
      const id = serverId ?? kept?.serverId ?? null;
      if (!id) throw badRequest('serverId is required for a server schedule', [{ path: ['serverId'], message: 'required: the server whose login runs the script' }]);
      return { scheduleType, serviceId: null, serverId: id };
    }
    return { scheduleType, serviceId: null, serverId: null };
  }

  /** Reading a host's schedule (its script) is the organization's owner's and admins'. */
  #assertMayRead(scheduleType: string, field = 'scheduleType'): void {
    if (isHostLevel(scheduleType) && this.#role === 'member')
      throw refused(field, `${scheduleType} schedules run a script as a host's login: only the organization's owner and admins may read or manage them`);
  }

  /** Creating, changing, running or deleting a schedule of this type; this machine's also needs the policy (unless `policy` is false) and an instance operator. */
  async #assertMayChange(scheduleType: string, o: { policy: boolean } = { policy: true }, field = 'scheduleType'): Promise<void> {
    this.#assertMayRead(scheduleType, field);
    if (scheduleType !== THIS_MACHINE_TYPE) return;
    const policy = o.policy ? thisMachineRefusal(this.cradle, field) : null;
    if (policy) throw policy;
    if (!(await this.cradle.accounts.isInstanceOperator(this.principal)))
      throw refused(field, "a dokploy-server schedule runs on Berth's own machine: only the instance's operators (the owner and admins of its first organization) may manage or run one");
  }

  get #role(): Role {
    return this.principal.role;
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** schedule.* for the current request's caller (request scope only). */
    scheduleRequests: ScheduleRequests;
    /** The schedules, their runs and views (the schedule plugin). */
    scheduleStore: ScheduleStore;
  }
}
