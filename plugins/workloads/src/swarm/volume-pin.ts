// The volume pin: a workload whose mounts live on one machine (a named volume, a host path, a file
// Berth wrote) cannot follow its task to another node of a multi-node swarm — the task would start
// there on an empty volume. Swarm does not know that, so Berth pins such a workload to one node with a
// `node.id == <id>` constraint written into the record's placementSwarm, where the user sees it and
// can change it (the peer pins them to managers without saying so). The node is the one its task
// runs on now, else the node of the engine Berth talks to (where Berth makes its volumes and writes
// its files). A placement that already names a node (by id or hostname) is the user's choice: kept.
import type Docker from 'dockerode';
import type { SwarmPlacement, WorkloadService } from '../services.ts';

const NAMES_A_NODE = /^\s*node\.(id|hostname)\s*==/;

interface NodeLine {
  ID: string;
  Description?: { Hostname?: string };
}

interface TaskLine {
  NodeID?: string;
  Status?: { State?: string };
}

/**
 * The placement that pins `service` to its node, or null when it needs none: no volume or bind
 * mount, a placement already naming a node, or a swarm of one node (or an engine that is no manager).
 */
export async function volumePin(docker: Docker, service: WorkloadService, log: (line: string) => void): Promise<SwarmPlacement | null> {
  const held = service.mounts.filter(m => m.type === 'volume' || m.type === 'bind');
  if (!held.length) return null;
  const constraints = service.placement?.Constraints ?? [];
  if (constraints.some(c => NAMES_A_NODE.test(c))) return null;
  let nodes: NodeLine[];
  try {
    nodes = (await docker.listNodes()) as NodeLine[];
  } catch {
    return null; // not a swarm manager: nothing to place
  }
  if (nodes.length < 2) return null;
  // The engine answers 404 for a service filter naming no service (a first deploy).
  const tasks = (await docker.listTasks({ filters: { service: [service.name], 'desired-state': ['running'] } }).catch(() => [])) as TaskLine[];
  const running = tasks.find(t => t.Status?.State === 'running' && t.NodeID);
  const nodeId = running?.NodeID ?? ((await docker.info()) as { Swarm?: { NodeID?: string } }).Swarm?.NodeID;
  const node = nodes.find(n => n.ID === nodeId);
  if (!node) return null;
  const constraint = `node.id == ${node.ID}`;
  const what = held.map(m => (m.type === 'volume' ? `volume ${m.source}` : m.managed ? `file ${m.target}` : `host path ${m.source}`)).join(', ');
  log(
    `Pinned ${service.name} to node ${node.Description?.Hostname ?? node.ID} (${constraint}, written into its placementSwarm): this swarm has ${nodes.length} nodes and its mounts (${what}) live on that one; change placementSwarm to move it`,
  );
  return { ...service.placement, Constraints: [...constraints, constraint] };
}
