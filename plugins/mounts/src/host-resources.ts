// Named volumes and bind sources are resources of the host, shared by every organization on
// it: a volume or directory one organization mounts must never reach another's data. So a
// volume mount may not name a volume another organization mounts or one of its workloads
// owns (workload plugins name their volumes after the workload's appName: "<appName>",
// "<appName>-data", ...), and a bind source may not be, contain or lie within another
// organization's bind source.
import { BerthError, conflict, type EntityManager } from '@berth/core';
import { Mount } from './entities.ts';
import type { StoredMount } from './paths.ts';
import { type WorkloadRef, type WorkloadRegistry } from '@berth/plugin-workloads';

/** The name itself and every prefix of it that ends before a "-", "_" or ".": the appNames that could own the volume. */
export function ownerCandidates(volumeName: string): string[] {
  const out = new Set<string>([volumeName]);
  for (let i = 1; i < volumeName.length; i++) if ('-_.'.includes(volumeName[i]!)) out.add(volumeName.slice(0, i));
  return [...out];
}

/** "/a/b/c" → ["/a", "/a/b", "/a/b/c"]. */
const selfAndAncestors = (hostPath: string) =>
  hostPath
    .split('/')
    .slice(1)
    .map((_, i, parts) => `/${parts.slice(0, i + 1).join('/')}`);
const escapeLike = (s: string) => s.replace(/[\\%_]/g, c => `\\${c}`);

/** CONFLICT when the mount's volume or bind source belongs to another organization. */
export async function assertOwnHostResource(mount: StoredMount, workload: WorkloadRef, workloads: WorkloadRegistry, em: EntityManager): Promise<void> {
  const others = { organizationId: { $ne: workload.organizationId } };
  if (mount.type === 'volume' && mount.volumeName) await assertOwnVolume(mount.volumeName, workload, workloads, em);
  if (mount.type === 'bind' && mount.hostPath) {
    const p = mount.hostPath;
    const overlap = await em.findOne(Mount, { type: 'bind', ...others, $or: [{ hostPath: { $in: selfAndAncestors(p) } }, { hostPath: { $like: `${escapeLike(p)}/%` } }] });
    if (overlap) throw conflict(`hostPath ${p} overlaps a directory another organization mounts`);
  }
}

/**
 * CONFLICT (naming the field) when the named volume belongs to another organization: mounted by it,
 * or its workload's by name. Answers whether the organization's own records claim it (a mount of
 * its, or its workload's by name). The one check mounts and compose files share.
 */
export async function assertOwnVolume(
  name: string,
  workload: Pick<WorkloadRef, 'organizationId' | 'serverId'>,
  workloads: WorkloadRegistry,
  em: EntityManager,
  field = 'volumeName',
): Promise<boolean> {
  const refuse = (why: string) => new BerthError('CONFLICT', `${field} ${name} ${why}`, [{ path: field.split('.'), message: `${field}: ${name} ${why}` }]);
  if (await em.findOne(Mount, { type: 'volume', volumeName: name, organizationId: { $ne: workload.organizationId } })) throw refuse('is used by another organization');
  let own = !!(await em.findOne(Mount, { type: 'volume', volumeName: name, organizationId: workload.organizationId }));
  for (const appName of ownerCandidates(name)) {
    const holder = await workloads.byAppName(appName, workload.serverId, em);
    if (holder && holder.organizationId !== workload.organizationId) throw refuse("belongs to another organization's workload");
    if (holder) own = true;
  }
  return own;
}
