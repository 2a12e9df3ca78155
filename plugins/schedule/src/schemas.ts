// The wire shapes of schedule.*, as the peer's (v0.30.2) schedule table and router have them. The
// `<kind>Id` fields and relations of the workload schedule types are the registered kinds' (made
// once every plugin is set up); a type whose kind is not registered here answers null in them.
import { Placement, Type, schema, type Static, type TSchema } from '@berth/core';
import { NotServedOne } from '@berth/plugin-workloads';

const { Nullable, Timestamp } = schema;

/** The peer's scheduleType values: a workload kind's container, a server of the organization, this machine. */
export const SCHEDULE_TYPES = ['application', 'compose', 'server', 'dokploy-server'] as const; // kind-names: the peer's scheduleType enum, whose workload values name the kinds the registry resolves
/** The scheduleType values that run in a workload's container: each the wire name of a kind of the registry. */
export const WORKLOAD_TYPES: readonly string[] = SCHEDULE_TYPES.slice(0, 2);
/** The scheduleType of a schedule run over SSH on a server of the organization. */
export const SERVER_TYPE = 'server';
/** The scheduleType of a schedule run on the machine Berth runs on. */
export const THIS_MACHINE_TYPE = 'dokploy-server';
export type ScheduleType = (typeof SCHEDULE_TYPES)[number];

export const SHELL_TYPES = ['bash', 'sh'] as const;
export type ShellType = (typeof SHELL_TYPES)[number];

/** A workload schedule type as the schemas see it: its id field, and whether a kind serves it here. */
export interface WorkloadTypeField {
  type: string;
  idField: string;
  registered: boolean;
}

const Id = Type.String({ minLength: 1, maxLength: 64 });
const IdRef = (what: string) => Type.Optional(Nullable(Type.String({ maxLength: 64, description: what })));
export const ScheduleId = Type.Object({ scheduleId: Id });

/** The fields a create and an update share (an update names the schedule too). */
const fields = (update: boolean) => ({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  cronExpression: Type.String({ minLength: 1, maxLength: 255, description: 'when it runs: a cron expression of 5 fields, or 6 with seconds first' }),
  serviceName: Type.Optional(Nullable(Type.String({ maxLength: 255, description: "the service of a stack whose container runs the command (empty: the workload's running container)" }))),
  shellType: Type.Optional(Type.Enum([...SHELL_TYPES], { ...(update ? {} : { default: 'bash' }), description: 'the shell that runs the command or script' })),
  scheduleType: Type.Optional(
    Type.Enum([...SCHEDULE_TYPES], {
      description:
        "what runs it: a workload's container (the command), a server of the organization over SSH (the script, as its login) or this machine (the script, instance operators only, when the config key hostAccess.hostSchedules allows it); absent: the type of the id field given",
    }),
  ),
  command: Type.String({ maxLength: 16384, description: "run with shellType -c inside the workload's container; for server schedules, run when script is empty" }),
  script: Type.Optional(Nullable(Type.String({ maxLength: 65536, description: 'the script a server or this machine runs with shellType -c' }))),
  serverId: IdRef('the server whose login runs the script (scheduleType server)'),
  enabled: Type.Optional(Type.Boolean({ ...(update ? {} : { default: true }) })),
  timezone: Type.Optional(Nullable(Type.String({ maxLength: 64, description: 'the IANA timezone the cron expression is read in (null: UTC)' }))),
});

/** The schemas that depend on the registered kinds (made once every plugin is set up). */
export function scheduleSchemas(types: WorkloadTypeField[], relations: { server: TSchema; deployment: TSchema }) {
  const idInputs = Object.fromEntries(types.filter(t => t.registered).map(t => [t.idField, IdRef(`the ${t.type} whose container runs the command (scheduleType ${t.type})`)]));
  const Create = Type.Object({ ...fields(false), ...idInputs });
  const Update = Type.Object({ scheduleId: Id, ...fields(true), ...idInputs });
  const View = Type.Object({
    scheduleId: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    cronExpression: Type.String(),
    appName: Type.String(),
    serviceName: Nullable(Type.String()),
    shellType: Type.Enum([...SHELL_TYPES]),
    scheduleType: Type.Enum([...SCHEDULE_TYPES]),
    command: Type.String(),
    script: Nullable(Type.String()),
    ...Object.fromEntries(types.map(t => [t.idField, Nullable(Type.String())])),
    serverId: Nullable(Type.String()),
    organizationId: Nullable(Type.String({ description: "the schedule's organization (Berth answers it for every type)" })),
    enabled: Type.Boolean(),
    timezone: Nullable(Type.String()),
    createdAt: Timestamp(),
  });
  /** The workload a schedule runs in, as list (and, with its environment, one) joins it. */
  const workload = (t: WorkloadTypeField, environment: boolean) =>
    t.registered
      ? Nullable(Type.Object({ [t.idField]: Type.String(), appName: Type.String(), name: Type.String(), serverId: Nullable(Type.String()), ...(environment ? { environment: Placement } : {}) }))
      : NotServedOne(`the ${t.type}`);
  const joined = (environment: boolean) => ({ ...Object.fromEntries(types.map(t => [t.type, workload(t, environment)])), server: relations.server });
  const ListItem = Type.Object({ ...View.properties, ...joined(false), deployments: Type.Array(relations.deployment, { description: 'its runs, newest first' }) });
  const One = Type.Object({ ...View.properties, ...joined(true) });
  return { Create, Update, View, ListItem, One };
}

export const ListInput = Type.Object({
  id: Type.String({ maxLength: 64, description: 'the workload or server whose schedules to list (ignored for dokploy-server)' }),
  scheduleType: Type.Enum([...SCHEDULE_TYPES]),
});

export const RunAnswer = Type.Object({
  status: Type.Enum(['done', 'error'], { description: 'how the run ended' }),
  deploymentId: Type.String({ description: 'the run: deployment.one, its log deployment.readLogs' }),
  logPath: Type.String(),
});

const CreateFields = Type.Object(fields(false));
export type ScheduleCreate = Static<typeof CreateFields> & Record<string, unknown>;
export type ScheduleUpdate = ScheduleCreate & { scheduleId: string };
export type ScheduleListInput = Static<typeof ListInput>;
export type RunAnswerT = Static<typeof RunAnswer>;
