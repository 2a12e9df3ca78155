// Before a service is created or updated on a swarm of more than one node, every node its tasks
// may be placed on must have the image or be able to pull it with the credentials the service
// gets: otherwise Swarm would reject the task there in a loop ("No such image"). Each node is asked
// through its own engine (the server whose engine is that node): the image present, or its
// manifest readable from the registry with the credentials sent in X-Registry-Auth on that call
// (nothing is pulled or written there). A node no server of the organization reaches is logged as
// not checked. Placement constraints on node.id, node.hostname, node.role, node.labels,
// engine.labels and node.platform narrow the nodes; any other constraint leaves a node in.
import type Docker from 'dockerode';
import { badRequest } from '@berth/core';
import type { RegistryAuth } from './runner.ts';

/** A swarm node as the engine lists it (what placement reads). */
interface SwarmNode {
  ID: string;
  Spec?: { Role?: string; Availability?: string; Labels?: Record<string, string> };
  Description?: { Hostname?: string; Platform?: { OS?: string; Architecture?: string }; Engine?: { Labels?: Record<string, string> } };
  Status?: { State?: string };
}

/** The engine of a swarm node (by node id), or null when none reaches it. */
export type NodeEngine = (nodeId: string) => Promise<Docker | null>;

/** How long one node may take to answer (a registry it cannot reach may leave the engine waiting). */
const NODE_TIMEOUT_MS = 30_000;

/** The node's value for a constraint's key: the attribute names are matched in any case, a label's name exactly as Swarm does. */
function attribute(node: SwarmNode, written: string): string | undefined {
  const key = written.toLowerCase();
  if (key === 'node.id') return node.ID;
  if (key === 'node.hostname') return node.Description?.Hostname;
  if (key === 'node.role') return node.Spec?.Role;
  if (key === 'node.platform.os') return node.Description?.Platform?.OS;
  if (key === 'node.platform.arch') return node.Description?.Platform?.Architecture;
  if (key.startsWith('node.labels.')) return node.Spec?.Labels?.[written.slice('node.labels.'.length)] ?? '';
  if (key.startsWith('engine.labels.')) return node.Description?.Engine?.Labels?.[written.slice('engine.labels.'.length)] ?? '';
  return undefined;
}

/** Whether the node satisfies every constraint Berth can read (an unknown attribute does not exclude it). */
export function placeable(node: SwarmNode, constraints: readonly string[]): boolean {
  if (node.Spec?.Availability && node.Spec.Availability !== 'active') return false;
  if (node.Status?.State && node.Status.State !== 'ready') return false;
  return constraints.every(c => {
    const m = /^\s*([\w.-]+)\s*(==|!=)\s*(.*?)\s*$/.exec(c);
    if (!m) return true;
    const value = attribute(node, m[1]!);
    if (value === undefined) return true;
    return (value.toLowerCase() === m[3]!.toLowerCase()) === (m[2] === '==');
  });
}

const reasonOf = (e: unknown, auth: RegistryAuth | undefined): string => {
  const err = e as { json?: { message?: string } | string; reason?: string; message?: string };
  const text = (typeof err?.json === 'object' ? err.json?.message : typeof err?.json === 'string' ? err.json.trim() : undefined) || err?.message || String(e);
  return auth?.password ? text.split(auth.password).join('***') : text;
};

async function canPull(engine: Docker, image: string, auth: RegistryAuth | undefined): Promise<string | null> {
  const present = await engine
    .getImage(image)
    .inspect()
    .then(() => true)
    .catch(() => false);
  if (present) return null;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      engine.getImage(image).distribution(auth ? { authconfig: auth } : {}),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer from its engine within ${NODE_TIMEOUT_MS / 1000} s`)), NODE_TIMEOUT_MS))),
    ]);
    return null;
  } catch (e) {
    return reasonOf(e, auth);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Fails with "node <hostname> cannot pull image <image>: <reason>" when a node the service may be
 * placed on has not the image and cannot pull it; nothing to check on a single-node swarm.
 */
export async function checkNodesCanPull(docker: Docker, work: { image: string; constraints: readonly string[]; auth?: RegistryAuth; log(line: string): void }, engineOf: NodeEngine): Promise<void> {
  const nodes = (await docker.listNodes().catch(() => [])) as SwarmNode[];
  if (nodes.length < 2) return;
  const candidates = nodes.filter(n => placeable(n, work.constraints));
  const name = (n: SwarmNode) => n.Description?.Hostname || n.ID;
  const results = await Promise.all(
    candidates.map(async node => {
      const engine = await engineOf(node.ID).catch(() => null);
      if (!engine) {
        work.log(`Node ${name(node)}: no server of the organization reaches its engine, its pull is not checked`);
        return null;
      }
      const reason = await canPull(engine, work.image, work.auth);
      return reason === null ? null : `node ${name(node)} cannot pull image ${work.image}: ${reason}`;
    }),
  );
  const refusal = results.find(r => r !== null);
  if (refusal) throw badRequest(refusal);
  work.log(`Checked the image on ${candidates.length} node(s) of the swarm`);
}
