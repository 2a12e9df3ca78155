// Placement by ownership. Swarm constraints are AND-only, so eligibility is one node label per
// organization: a node carries `berth.org.<organizationId>=true` for each organization whose tasks
// may run on it, and every service Berth makes for a record carries the constraint
// `node.labels.berth.org.<its organization>==true` besides the user's own (which can only narrow it).
// - A node the instance operators share (this machine's own node, the managers of its swarm, a
//   server of the instance operators' organization joined to it) carries `berth.shared=true` and
//   the label of every organization, kept current as organizations come and go.
// - An organization's own node (its server, or a server it joined to a swarm) carries that
//   organization's label alone, and `berth.organization=<id>`: the node listings of a server's
//   swarm show an organization the nodes so marked (and the server's own).
// Labels are added for the organizations that exist and removed with an organization; a node update that races another
// (the engine's "update out of sequence") is read and tried again.
import type Docker from 'dockerode';
import { ORGANIZATION_LABEL } from './labels.ts';

/** The node label prefix of organization eligibility. */
export const ORGANIZATION_NODE_LABEL = 'berth.org.';
/** On a node every organization may use (the instance operators'). */
export const SHARED_NODE_LABEL = 'berth.shared';

export const organizationNodeLabel = (organizationId: string) => `${ORGANIZATION_NODE_LABEL}${organizationId}`;
/** The constraint that keeps a record's tasks on the nodes its organization may use. */
export const organizationConstraint = (organizationId: string) => `node.labels.${organizationNodeLabel(organizationId)}==true`;

const normal = (c: string) => c.replace(/\s+/g, '');

/**
 * The constraints a record's service is created with: its organization's first, then the user's
 * own as written (one that repeats the organization's is not added twice). Constraints are ANDed,
 * so the user's can narrow the nodes, never widen them.
 */
export function withOrganizationConstraint(organizationId: string, constraints: readonly string[] | null | undefined): string[] {
  const ours = organizationConstraint(organizationId);
  return [ours, ...(constraints ?? []).filter(c => typeof c !== 'string' || normal(c) !== ours)];
}

type Call = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

interface NodeObject {
  ID: string;
  Version: { Index: number };
  Spec: { Role?: string; Labels?: Record<string, string> } & Record<string, unknown>;
  Description?: { Hostname?: string };
}

/**
 * Changes a node's spec: `next` gets the node as it is now and answers the wanted spec (null: no
 * change). Read and tried again when another update got there first (the engine's "update out of
 * sequence"): labels are written at preparation, before deploys and at joins, so a drain or a
 * relabel may race one.
 */
export async function updateNode(docker: Docker, nodeId: string, what: string, next: (node: NodeObject) => NodeObject['Spec'] | null, call: Call): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    // cast: dockerode types the node inspect answer loosely
    const node = (await call(`inspect node ${nodeId}`, () => docker.getNode(nodeId).inspect())) as NodeObject;
    const spec = next(node);
    if (!spec) return false;
    try {
      await docker.getNode(nodeId).update({ _query: { version: node.Version.Index }, _body: spec });
      return true;
    } catch (e) {
      // The engine's own error, read before the boundary converts it (a 500's reason reaches only the log there).
      const reason = (e as { json?: { message?: string } }).json?.message ?? String((e as Error).message);
      if (attempt < 4 && /out of sequence/i.test(reason)) continue;
      return call(what, () => Promise.reject(e as Error));
    }
  }
}

/**
 * Changes a node's labels: `next` gets the current labels and answers the wanted ones (null: no
 * change). Retried when another update got there first.
 */
export async function relabelNode(docker: Docker, nodeId: string, next: (labels: Record<string, string>, node: NodeObject) => Record<string, string> | null, call: Call): Promise<boolean> {
  return updateNode(
    docker,
    nodeId,
    `label node ${nodeId}`,
    node => {
      const labels = next({ ...(node.Spec.Labels ?? {}) }, node);
      return labels ? { ...node.Spec, Labels: labels } : null;
    },
    call,
  );
}

const same = (a: Record<string, string>, b: Record<string, string>) => Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

/**
 * A shared node's labels: berth.shared and the label of every organization that exists added. Labels
 * are only added here (an organization's goes when it is removed): an engine may serve more than
 * one Berth (tests do), and another instance's organizations are not this one's to take away.
 */
export function sharedLabels(labels: Record<string, string>, organizations: readonly string[]): Record<string, string> | null {
  const out: Record<string, string> = { [SHARED_NODE_LABEL]: 'true' };
  for (const [k, v] of Object.entries(labels)) if (k !== ORGANIZATION_LABEL) out[k] = v;
  for (const id of organizations) out[organizationNodeLabel(id)] = 'true';
  return same(out, labels) ? null : out;
}

/** An organization's own node: its label and its owner mark added (what else it carries is kept). */
export function ownLabels(labels: Record<string, string>, organizationId: string): Record<string, string> | null {
  if (labels[SHARED_NODE_LABEL] === 'true') return labels[organizationNodeLabel(organizationId)] === 'true' ? null : { ...labels, [organizationNodeLabel(organizationId)]: 'true' };
  const out = { ...labels, [organizationNodeLabel(organizationId)]: 'true', [ORGANIZATION_LABEL]: organizationId };
  return same(out, labels) ? null : out;
}

/** A node given to one organization alone (joined for it): its label only, and its owner mark. */
export function onlyOrganizationLabels(labels: Record<string, string>, organizationId: string): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) if (!k.startsWith(ORGANIZATION_NODE_LABEL) && k !== SHARED_NODE_LABEL) out[k] = v;
  out[organizationNodeLabel(organizationId)] = 'true';
  out[ORGANIZATION_LABEL] = organizationId;
  return same(out, labels) ? null : out;
}

/** An organization removed: its label goes from the node. */
export function withoutOrganization(labels: Record<string, string>, organizationId: string): Record<string, string> | null {
  if (!(organizationNodeLabel(organizationId) in labels)) return null;
  const out = { ...labels };
  delete out[organizationNodeLabel(organizationId)];
  return out;
}

/** Whether the labels give the node to the organization as its own (not shared). */
export const ownedNode = (labels: Record<string, string> | undefined, organizationId: string) => labels?.[ORGANIZATION_LABEL] === organizationId && labels[SHARED_NODE_LABEL] !== 'true';
