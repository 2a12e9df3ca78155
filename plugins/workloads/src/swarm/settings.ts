// The Swarm settings every workload record carries (applications and databases alike): their
// API schemas and defaults, in one table, and how they become a WorkloadService. Both the
// application plugin and the database kit read them from here.
import Type, { type TSchema } from 'typebox';
import type { WorkloadService } from '../services.ts';
import { parseCpu, parseMemory } from './resources.ts';
import { badRequest, schema } from '@berth/core';
const { Nullable } = schema;

const Ns = () => Type.Optional(Type.Integer({ minimum: 0 }));
const Obj = (props: Record<string, TSchema>) => Nullable(Type.Object(props));
const UpdateConfig = () =>
  Obj({
    Parallelism: Type.Integer({ minimum: 0 }),
    Delay: Ns(),
    FailureAction: Type.Optional(Type.Enum(['pause', 'continue', 'rollback'])),
    Monitor: Ns(),
    MaxFailureRatio: Type.Optional(Type.Number({ minimum: 0 })),
    Order: Type.Enum(['stop-first', 'start-first']),
  });
/** Memory and CPU: strings ("512m", "0.5") in the current variant, numbers in the older one. */
const Resource = () => Nullable(Type.Union([Type.String({ maxLength: 32 }), Type.Number({ minimum: 0 })]));

/** Field → [API schema, default]. */
export const swarmSettingFields = {
  command: [Nullable(Type.String()), null],
  args: [Nullable(Type.Array(Type.String())), null],
  memoryReservation: [Resource(), null],
  memoryLimit: [Resource(), null],
  cpuReservation: [Resource(), null],
  cpuLimit: [Resource(), null],
  healthCheckSwarm: [Obj({ Test: Type.Optional(Type.Array(Type.String())), Interval: Ns(), Timeout: Ns(), StartPeriod: Ns(), Retries: Ns() }), null],
  restartPolicySwarm: [Obj({ Condition: Type.Optional(Type.Enum(['none', 'on-failure', 'any'])), Delay: Ns(), MaxAttempts: Ns(), Window: Ns() }), null],
  placementSwarm: [
    Obj({
      Constraints: Type.Optional(Type.Array(Type.String())),
      Preferences: Type.Optional(Type.Array(Type.Object({ Spread: Type.Object({ SpreadDescriptor: Type.String() }) }))),
      MaxReplicas: Ns(),
      Platforms: Type.Optional(Type.Array(Type.Object({ Architecture: Type.String(), OS: Type.String() }))),
    }),
    null,
  ],
  updateConfigSwarm: [UpdateConfig(), null],
  rollbackConfigSwarm: [UpdateConfig(), null],
  modeSwarm: [
    Obj({
      Replicated: Type.Optional(Type.Object({ Replicas: Ns() })),
      Global: Type.Optional(Type.Object({})),
      ReplicatedJob: Type.Optional(Type.Object({ MaxConcurrent: Ns(), TotalCompletions: Ns() })),
      GlobalJob: Type.Optional(Type.Object({})),
    }),
    null,
  ],
  labelsSwarm: [Nullable(Type.Record(Type.String(), Type.String())), null],
  networkSwarm: [
    Nullable(
      Type.Array(Type.Object({ Target: Type.Optional(Type.String()), Aliases: Type.Optional(Type.Array(Type.String())), DriverOpts: Type.Optional(Type.Record(Type.String(), Type.String())) })),
    ),
    null,
  ],
  stopGracePeriodSwarm: [Nullable(Type.Integer({ minimum: 0, description: 'nanoseconds' })), null],
  endpointSpecSwarm: [
    Obj({
      Mode: Type.Optional(Type.Enum(['vip', 'dnsrr'])),
      Ports: Type.Optional(
        Type.Array(
          Type.Object({ Protocol: Type.Optional(Type.String()), TargetPort: Type.Optional(Type.Integer()), PublishedPort: Type.Optional(Type.Integer()), PublishMode: Type.Optional(Type.String()) }),
        ),
      ),
    }),
    null,
  ],
  ulimitsSwarm: [Nullable(Type.Array(Type.Object({ Name: Type.String({ minLength: 1 }), Soft: Type.Integer({ minimum: -1 }), Hard: Type.Integer({ minimum: -1 }) }))), null],
  replicas: [Type.Integer({ minimum: 0, maximum: 1000 }), 1],
  networkIds: [Nullable(Type.Array(Type.String())), null],
} satisfies Record<string, [TSchema, unknown]>;

export type SwarmSettingKey = keyof typeof swarmSettingFields;

const RESOURCE_KEYS = ['memoryReservation', 'memoryLimit', 'cpuReservation', 'cpuLimit'] as const;
/** Memory and CPU as answers carry them: text, as the peer stores them. */
// cast: Object.fromEntries loses the keys, which are RESOURCE_KEYS.
export const swarmResourceAnswers = Object.fromEntries(RESOURCE_KEYS.map(k => [k, Nullable(Type.String())])) as unknown as Record<(typeof RESOURCE_KEYS)[number], TSchema>;
/** The settings as answered: a number the older variant sent for memory or CPU becomes its digits (read the same way, see resources.ts). */
export function answerSwarmSettings<T extends Record<string, unknown>>(settings: T): T {
  const out: Record<string, unknown> = { ...settings };
  for (const k of RESOURCE_KEYS) if (typeof out[k] === 'number') out[k] = String(out[k]);
  return out as T;
}

/** Memory/CPU are checked when deployed; a bad value names its field. */
function resource<T>(field: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    const message = `${field}: ${(e as Error).message}`;
    throw badRequest(message, [{ path: [field], message }]);
  }
}

/** The parts of a WorkloadService that come from a record's Swarm settings. */
export function swarmSettingsToService(
  s: Record<string, unknown>,
): Pick<
  WorkloadService,
  | 'command'
  | 'args'
  | 'memoryLimit'
  | 'memoryReservation'
  | 'cpuLimit'
  | 'cpuReservation'
  | 'replicas'
  | 'healthCheck'
  | 'restartPolicy'
  | 'placement'
  | 'updateConfig'
  | 'rollbackConfig'
  | 'mode'
  | 'labels'
  | 'networks'
  | 'stopGracePeriod'
> {
  type R = string | number | null;
  return {
    command: (s.command as string | null) ?? null,
    args: (s.args as string[] | null) ?? null,
    memoryLimit: resource('memoryLimit', () => parseMemory(s.memoryLimit as R)),
    memoryReservation: resource('memoryReservation', () => parseMemory(s.memoryReservation as R)),
    cpuLimit: resource('cpuLimit', () => parseCpu(s.cpuLimit as R)),
    cpuReservation: resource('cpuReservation', () => parseCpu(s.cpuReservation as R)),
    replicas: Number(s.replicas ?? 1),
    healthCheck: (s.healthCheckSwarm as WorkloadService['healthCheck']) ?? null,
    restartPolicy: (s.restartPolicySwarm as WorkloadService['restartPolicy']) ?? null,
    placement: (s.placementSwarm as WorkloadService['placement']) ?? null,
    updateConfig: (s.updateConfigSwarm as WorkloadService['updateConfig']) ?? null,
    rollbackConfig: (s.rollbackConfigSwarm as WorkloadService['rollbackConfig']) ?? null,
    mode: (s.modeSwarm as WorkloadService['mode']) ?? null,
    labels: (s.labelsSwarm as Record<string, string> | null) ?? null,
    networks: (s.networkSwarm as WorkloadService['networks']) ?? null,
    stopGracePeriod: (s.stopGracePeriodSwarm as number | null) ?? null,
  };
}
