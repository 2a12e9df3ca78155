// WorkloadService (core/src/contracts/services.ts) → the engine's ServiceSpec (API 1.41).
// Pure: no engine access, so the mapping can be read and tested on its own.
//
// Decisions:
// - `command` replaces the image's entrypoint and is split on whitespace into an argument
//   array (no shell ever runs it; an argument with spaces goes in `args`); `args` become the
//   ContainerSpec's Args (the image's CMD) as given.
// - Without an updateConfig the update order is start-first (see updateOrder): the new task
//   starts beside the old one, which Swarm takes out of DNS (tasks.<name>, what the proxy reads)
//   2 s before SIGTERM, so a redeploy fails no request. A task with a health check joins DNS once
//   healthy; one without joins once its container started, maybe before the app listens: the
//   proxy retries such a refused dial on another task (issue 51, measured by
//   bench/deploy-load.ts). A port published in host mode forces stop-first (two tasks cannot hold
//   one host port on a node), so does a placement's MaxReplicas (the old task fills its node's
//   count), and `defaultUpdateOrder` (a database: one writer) wins. The deploy's log says which
//   and why. A failed update rolls back to the previous spec.
// - Berth's own labels (ownerLabels) win over user labels of the same key, on the service and
//   on its containers.
// - Placement by ownership: a workload of an organization (its berth.organization owner label)
//   gets the constraint node.labels.berth.org.<id>==true first, then the record's own constraints
//   as written; constraints are ANDed, so the user's narrow the nodes and never widen them (the
//   record keeps what the user wrote: the merge is made here, on every create and update).
// - Every name that reaches the host is checked here; a bad one is BAD_REQUEST with an issue
//   whose path names the WorkloadService field.
import type Docker from 'dockerode';
import type { ServicePort, WorkloadService } from '../services.ts';
import { ENV_KEY, toEnvList } from './env.ts';
import { type Issue, badRequest } from '@berth/core';
import { ORGANIZATION_LABEL, withOrganizationConstraint } from '@berth/plugin-hosts';

/** What Swarm accepts as a service name (a DNS label; no dots), at most 63 characters. */
export const SERVICE_NAME = /^(?=.{1,63}$)[a-zA-Z0-9](?:[-_]*[a-zA-Z0-9]+)*$/;
/**
 * registry[:port]/path/name[:tag][@sha256:digest] as Docker reads it: the first component is a
 * registry only when it has a dot or a port or is localhost; path components are lower-case.
 */
const LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const DOMAIN = `(?:localhost(?::[0-9]{1,5})?|${LABEL}(?:\\.${LABEL})+(?::[0-9]{1,5})?|${LABEL}:[0-9]{1,5})`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
export const IMAGE_REFERENCE = new RegExp(`^(?=.{1,255}$)(?:${DOMAIN}\\/)?${PATH_COMPONENT}(?:\\/${PATH_COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$`);

/** Volume and network names as the engine accepts them. */
export const VOLUME_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,254}$/;
const NETWORK_NAME = VOLUME_NAME;
const UPDATE_ORDERS = ['start-first', 'stop-first'];
const CONSTRAINT = /^\s*[\w.-]+\s*(?:==|!=)\s*[^=!\s](?:[^=!]*[^=!\s])?\s*$/;

export interface ServiceSpecOptions {
  /** The network every workload joins unless it opts out (PLATFORM_NETWORK). */
  platformNetwork: string;
  /** TaskTemplate.ForceUpdate: the runner raises it so that every deploy replaces the tasks. */
  forceUpdate?: number;
  /** Run an init process as PID 1 (reaps zombies, forwards signals). Engine default otherwise. */
  init?: boolean;
}

export type ServiceSpec = Docker.ServiceSpec;

const fieldError = (path: Issue['path'], message: string) => badRequest(message, [{ path, message }]);

/** Checks the service name against Swarm's pattern; BAD_REQUEST naming the field otherwise. */
export function checkServiceName(name: string, field = 'name'): void {
  if (typeof name !== 'string' || !SERVICE_NAME.test(name)) {
    throw fieldError([field], `Invalid ${field} "${String(name)}": letters, digits, - and _ (starting and ending with a letter or digit), at most 63 characters`);
  }
}

/** Checks an image reference (registry/name:tag@digest); BAD_REQUEST naming the field otherwise. */
export function checkImage(image: string, field = 'image'): void {
  if (typeof image !== 'string' || !IMAGE_REFERENCE.test(image)) {
    throw fieldError([field], `Invalid ${field} "${String(image)}": use an image reference such as nginx:1.27, ghcr.io/owner/app:tag or registry:5000/app@sha256:<digest>`);
  }
}

export function toServiceSpec(w: WorkloadService, opts: ServiceSpecOptions): ServiceSpec {
  check(w);
  const entrypoint = w.command?.trim() ? w.command.trim().split(/\s+/) : undefined;
  const containerSpec = compact({
    Image: w.image,
    Command: entrypoint,
    Args: w.args?.length ? [...w.args] : undefined,
    Env: toEnvList(w.env),
    Labels: { ...w.ownerLabels },
    Mounts: w.mounts.length ? w.mounts.map(m => ({ Type: m.type, Source: m.source, Target: m.target, ReadOnly: m.readOnly ?? false })) : undefined,
    Init: opts.init,
    StopGracePeriod: w.stopGracePeriod ?? undefined,
    HealthCheck: w.healthCheck ?? undefined,
  });

  const networks = [...(w.detachPlatformNetwork ? [] : [{ Target: opts.platformNetwork }]), ...(w.networks ?? []).filter(n => w.detachPlatformNetwork || n.Target !== opts.platformNetwork)];

  const mode = w.mode ? (w.mode.Replicated && w.mode.Replicated.Replicas === undefined ? { ...w.mode, Replicated: { Replicas: w.replicas } } : w.mode) : { Replicated: { Replicas: w.replicas } };

  const { order } = updateOrder(w);

  return compact({
    Name: w.name,
    Labels: { ...(w.labels ?? {}), ...w.ownerLabels },
    TaskTemplate: compact({
      ContainerSpec: containerSpec,
      Resources: compact({
        Limits: compact({ MemoryBytes: w.memoryLimit ?? undefined, NanoCPUs: w.cpuLimit ?? undefined }),
        Reservations: compact({ MemoryBytes: w.memoryReservation ?? undefined, NanoCPUs: w.cpuReservation ?? undefined }),
      }),
      RestartPolicy: w.restartPolicy ?? undefined,
      Placement: placementOf(w),
      Networks: networks.length ? networks : undefined,
      ForceUpdate: opts.forceUpdate ?? 0,
    }),
    Mode: mode,
    UpdateConfig: w.updateConfig ?? { Parallelism: 1, Order: order, FailureAction: 'rollback' },
    RollbackConfig: w.rollbackConfig ?? undefined,
    EndpointSpec: compact({
      Mode: 'vip',
      Ports: w.ports.length ? w.ports.map(p => ({ Protocol: p.protocol, TargetPort: p.targetPort, PublishedPort: p.publishedPort, PublishMode: p.publishMode })) : undefined,
    }),
  }) as ServiceSpec;
}

/** How a deploy replaces the tasks when no updateConfig says it, and why (for the deploy's log). */
export function updateOrder(w: Pick<WorkloadService, 'ports' | 'mounts' | 'placement' | 'defaultUpdateOrder' | 'updateConfig'>): { order: 'start-first' | 'stop-first'; reason: string } {
  if (w.updateConfig) return { order: w.updateConfig.Order === 'stop-first' ? 'stop-first' : 'start-first', reason: 'as its update settings (updateConfigSwarm) say' };
  const host = w.ports.find(p => p.publishMode === 'host');
  if (host) {
    return {
      order: 'stop-first',
      reason: `forced: port ${host.publishedPort}/${host.protocol} is published in host mode, which one task per node can hold, so the old task stops before the new one starts and the port answers nothing meanwhile (publish it in ingress mode or serve it through a domain for a deploy without downtime)`,
    };
  }
  const perNode = w.placement?.MaxReplicas;
  if (perNode) {
    // The scheduler counts the old task: on a node full of them the new one would wait for ever.
    return { order: 'stop-first', reason: `forced: its placement allows ${perNode} task(s) per node (MaxReplicas), so a new task beside the old one could find no node` };
  }
  if (w.defaultUpdateOrder === 'stop-first') return { order: 'stop-first', reason: 'one task at a time holds its data' };
  const volume = w.mounts.find(m => m.type === 'volume');
  const shared = volume ? `; both mount volume ${volume.source} meanwhile (an application that must hold it alone sets updateConfigSwarm.Order stop-first)` : '';
  return { order: 'start-first', reason: `the new task starts beside the old one, which stops once the new one runs${shared}` };
}

/** The record's placement with its organization's constraint first (see the decisions above). */
export function placementOf(w: Pick<WorkloadService, 'placement' | 'ownerLabels'>): WorkloadService['placement'] | undefined {
  const organizationId = w.ownerLabels[ORGANIZATION_LABEL];
  if (!organizationId) return w.placement ?? undefined;
  return { ...(w.placement ?? {}), Constraints: withOrganizationConstraint(organizationId, w.placement?.Constraints) };
}

function check(w: WorkloadService): void {
  checkServiceName(w.name);
  checkImage(w.image);
  for (const key of Object.keys(w.env)) {
    if (!ENV_KEY.test(key)) throw fieldError(['env', key], `Invalid environment variable name "${key}": use letters, digits and _, not starting with a digit`);
  }
  if (w.command != null && w.command.includes('\0')) throw fieldError(['command'], 'Invalid command: it contains a NUL character');
  w.mounts.forEach((m, i) => checkMount(m, i));
  checkPorts(w.ports);
  for (const [i, n] of (w.networks ?? []).entries()) {
    if (!n.Target || !NETWORK_NAME.test(n.Target)) throw fieldError(['networks', i, 'Target'], `Invalid network "${String(n.Target)}": use a network name or id`);
  }
  for (const [i, c] of (w.placement?.Constraints ?? []).entries()) {
    // The engine answers a malformed constraint with a bare 500; say what is wrong instead.
    if (typeof c !== 'string' || !CONSTRAINT.test(c))
      throw fieldError(['placement', 'Constraints', i], `Invalid placement constraint "${String(c)}": use <attribute>==<value> or <attribute>!=<value>, e.g. node.role==manager`);
  }
  if (!Number.isInteger(w.replicas) || w.replicas < 0) throw fieldError(['replicas'], `Invalid replicas ${String(w.replicas)}: use a whole number, 0 or more`);
  for (const field of ['memoryLimit', 'memoryReservation', 'cpuLimit', 'cpuReservation', 'stopGracePeriod'] as const) {
    const v = w[field];
    if (v != null && (!Number.isSafeInteger(v) || v < 0)) throw fieldError([field], `Invalid ${field} ${String(v)}: use a whole number, 0 or more`);
  }
  for (const field of ['updateConfig', 'rollbackConfig'] as const) {
    const order = w[field]?.Order;
    if (order !== undefined && !UPDATE_ORDERS.includes(order)) throw fieldError([field, 'Order'], `Invalid ${field}.Order "${order}": use start-first or stop-first`);
  }
}

function checkMount(m: WorkloadService['mounts'][number], i: number): void {
  const absolute = (p: string) => typeof p === 'string' && p.startsWith('/') && !p.includes('\0') && !p.split('/').includes('..');
  if (!absolute(m.target)) throw fieldError(['mounts', i, 'target'], `Invalid mount target "${String(m.target)}": use an absolute path inside the container`);
  if (m.type === 'bind') {
    if (!absolute(m.source)) throw fieldError(['mounts', i, 'source'], `Invalid bind mount source "${String(m.source)}": use an absolute host path`);
  } else if (m.type === 'volume') {
    if (typeof m.source !== 'string' || !VOLUME_NAME.test(m.source))
      throw fieldError(['mounts', i, 'source'], `Invalid volume name "${String(m.source)}": letters, digits, _, . and -, starting with a letter or digit`);
  } else {
    throw fieldError(['mounts', i, 'type'], `Invalid mount type "${String(m.type)}": use bind or volume`);
  }
}

function checkPorts(ports: ServicePort[]): void {
  const seen = new Set<string>();
  const isPort = (n: number) => Number.isInteger(n) && n >= 1 && n <= 65535;
  for (const [i, p] of ports.entries()) {
    if (!isPort(p.targetPort)) throw fieldError(['ports', i, 'targetPort'], `Invalid target port ${String(p.targetPort)}: use 1-65535`);
    if (!isPort(p.publishedPort)) throw fieldError(['ports', i, 'publishedPort'], `Invalid published port ${String(p.publishedPort)}: use 1-65535`);
    if (p.protocol !== 'tcp' && p.protocol !== 'udp') throw fieldError(['ports', i, 'protocol'], `Invalid protocol "${String(p.protocol)}": use tcp or udp`);
    if (p.publishMode !== 'ingress' && p.publishMode !== 'host') throw fieldError(['ports', i, 'publishMode'], `Invalid publish mode "${String(p.publishMode)}": use ingress or host`);
    const key = `${p.publishedPort}/${p.protocol}`;
    if (seen.has(key)) throw fieldError(['ports', i, 'publishedPort'], `Published port ${key} is used twice`);
    seen.add(key);
  }
}

/** Drops undefined fields and empty objects, so the spec holds only what was asked for. */
function compact<T extends Record<string, unknown>>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  return out as T;
}
