// The engine's objects as the peer's answers show them: the peer runs the Docker CLI and splits its
// lines, so its rows carry the CLI's renderings (a container's short id, its ports as `docker ps`
// prints them, a task's "Running 5 minutes ago"). Berth asks the engine's API and renders the same
// here. Pure: no engine access.
import type { ContainerRow, MatchedContainer, NamedContainer, TaskRow } from './schemas.ts';

/** A container as the engine lists it (GET /containers/json). */
export interface EngineContainer {
  Id: string;
  Names?: string[];
  Image?: string;
  State?: string;
  Status?: string;
  Labels?: Record<string, string> | null;
  Ports?: { IP?: string; PrivatePort: number; PublicPort?: number; Type: string }[];
}

/** A swarm task as the engine lists it (GET /tasks). */
export interface EngineTask {
  ID: string;
  ServiceID: string;
  NodeID?: string;
  Slot?: number;
  DesiredState?: string;
  CreatedAt?: string;
  Status?: { State?: string; Timestamp?: string; Err?: string; ContainerStatus?: { ContainerID?: string } };
}

const shortId = (id: string) => id.slice(0, 12);
/** The names `docker ps` prints: without the leading slash, comma-separated. */
export const nameOf = (c: Pick<EngineContainer, 'Names' | 'Id'>) => (c.Names ?? []).map(n => n.replace(/^\//, '')).join(',') || shortId(c.Id);

/** The ports as `docker ps` prints them: published ones as address:port->port/protocol, the others as port/protocol. */
export function portsOf(ports: EngineContainer['Ports']): string {
  const shown = (ports ?? [])
    .slice()
    .sort((a, b) => a.PrivatePort - b.PrivatePort || (a.IP ?? '').localeCompare(b.IP ?? ''))
    .map(p => {
      if (!p.PublicPort) return `${p.PrivatePort}/${p.Type}`;
      const ip = p.IP?.includes(':') ? `[${p.IP}]` : (p.IP ?? '0.0.0.0');
      return `${ip}:${p.PublicPort}->${p.PrivatePort}/${p.Type}`;
    });
  return [...new Set(shown)].join(', ');
}

export const containerRow = (c: EngineContainer, serverId: string | undefined): ContainerRow => ({
  containerId: shortId(c.Id),
  name: nameOf(c),
  image: c.Image ?? '',
  ports: portsOf(c.Ports),
  state: c.State ?? '',
  status: c.Status ?? '',
  ...(serverId ? { serverId } : {}),
});

export const namedContainer = (c: EngineContainer): NamedContainer => ({ containerId: shortId(c.Id), name: nameOf(c), state: c.State ?? '' });

export const matchedContainer = (c: EngineContainer): MatchedContainer => ({ ...namedContainer(c), status: c.Status ?? '' });

/** A duration as the Docker CLI says it (go-units' HumanDuration). */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 1) return 'Less than a second';
  if (seconds === 1) return '1 second';
  if (seconds < 60) return `${seconds} seconds`;
  const minutes = Math.floor(seconds / 60);
  if (minutes === 1) return 'About a minute';
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.floor(ms / 3_600_000 + 0.5);
  if (hours === 1) return 'About an hour';
  if (hours < 48) return `${hours} hours`;
  if (hours < 24 * 7 * 2) return `${Math.floor(hours / 24)} days`;
  if (hours < 24 * 30 * 2) return `${Math.floor(hours / 24 / 7)} weeks`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24 / 30)} months`;
  return `${Math.floor(ms / 3_600_000 / 24 / 365)} years`;
}

/** A task's current state as `docker service ps` prints it: "Running 5 minutes ago". */
export function currentState(task: EngineTask, now = Date.now()): string {
  const state = task.Status?.State ?? '';
  const at = Date.parse(task.Status?.Timestamp ?? '');
  const pretty = state ? state[0]!.toUpperCase() + state.slice(1) : '';
  return Number.isNaN(at) ? pretty : `${pretty} ${humanDuration(Math.max(0, now - at)).toLowerCase()} ago`;
}

/** <service>.<slot> (a global service's task: <service>.<node id>), as the CLI names a task. */
export const taskName = (task: EngineTask, service: string) => `${service}.${task.Slot || task.NodeID || ''}`;

/** The CLI's order: by service and slot, the newest task of a slot first. */
export const bySlot = (a: EngineTask, b: EngineTask) => a.ServiceID.localeCompare(b.ServiceID) || (a.Slot ?? 0) - (b.Slot ?? 0) || (b.CreatedAt ?? '').localeCompare(a.CreatedAt ?? '');

/** A task as `docker service ps --no-trunc` / `docker stack ps --no-trunc` print it. */
export const taskRow = (task: EngineTask, service: string, node: string): TaskRow => ({
  containerId: task.ID,
  name: taskName(task, service),
  state: (task.DesiredState ?? '').toLowerCase(),
  node,
  currentState: currentState(task),
  error: task.Status?.Err ?? '',
});

/** A running task of a stack as the peer's getContainersByAppNameMatch answers it (appType stack). */
export function stackTask(task: EngineTask, service: string, node: string): MatchedContainer {
  const state = currentState(task);
  const error = task.Status?.Err ?? '';
  return {
    containerId: (task.Status?.ContainerStatus?.ContainerID ?? '').slice(0, 12),
    name: `${taskName(task, service)}.${task.ID}`,
    node,
    state: (state.split(' ')[0] ?? '').toLowerCase() || 'No state',
    status: error ? `${state} (${error})` : state,
  };
}
