// Mounts of workloads as the deploy pipelines read them (the MountDirectory), and what mounts.*
// (requests.ts) shares with it: a mount as stored and as the API answers it. A mount of another
// organization is NOT_FOUND, never FORBIDDEN.
import type { EntityManager, SecretBox, TSchema } from '@berth/core';
import { type MountDirectory, type MountRecord, type WorkloadRegistry } from '@berth/plugin-workloads';
import { Mount, type MountRow } from './entities.ts';
import { assertOwnVolume } from './host-resources.ts';
import { mountSchemas, ownerFieldsOf, type MountOwnerKind, type MountView } from './schemas.ts';

export const ownedBy = (serviceType: string, ids: string | string[]) => ({ serviceType, serviceId: Array.isArray(ids) ? { $in: ids } : ids });
export const order = { orderBy: { createdAt: 'asc', mountId: 'asc' } } as const;

/** The registered kinds that support mounts. */
export const ownerKindsOf = (workloads: WorkloadRegistry): MountOwnerKind[] => workloads.supporting('mounts').map(k => ({ kind: k.kind, idField: k.idField }));

/** The mount as the API answers it: the owner under its kind's id field too (the peer's applicationId, postgresId...), null under the others. */
export function viewOf(record: MountRecord, kinds: MountOwnerKind[]): MountView {
  const { serviceId, volumeAdopted: _, ...rest } = record;
  const owner = kinds.find(k => k.kind === record.serviceType)?.idField;
  const owners = Object.fromEntries(ownerFieldsOf(kinds).map(f => [f, f === owner ? serviceId : null]));
  return { ...rest, ...owners } as MountView;
}

/** A file mount's content opened (it is sealed at rest). */
export function openContent(sealed: string | null | undefined, secrets: SecretBox): string | null {
  return sealed === null || sealed === undefined ? null : secrets.decrypt(sealed);
}

export function toRecord(row: MountRow, secrets: SecretBox): MountRecord {
  return {
    mountId: row.mountId,
    type: row.type,
    hostPath: row.hostPath ?? null,
    volumeName: row.volumeName ?? null,
    volumeAdopted: row.volumeAdopted,
    filePath: row.filePath ?? null,
    content: openContent(row.content, secrets),
    mountPath: row.mountPath,
    serviceType: row.serviceType,
    serviceId: row.serviceId,
  };
}

export interface MountServiceDeps {
  workloads: WorkloadRegistry;
  /** Resolved on use: the kernel's SecretBox. */
  secrets: () => SecretBox;
}

export class MountService implements MountDirectory {
  readonly #workloads: WorkloadRegistry;
  readonly #secrets: () => SecretBox;

  constructor(deps: MountServiceDeps) {
    this.#workloads = deps.workloads;
    this.#secrets = deps.secrets;
  }

  /** The registered kinds that support mounts. */
  ownerKinds(): MountOwnerKind[] {
    return ownerKindsOf(this.#workloads);
  }

  // ------------------------------------------------------------ MountDirectory
  async forServices(serviceType: string, serviceIds: string[], em: EntityManager): Promise<Map<string, MountRecord[]>> {
    const out = new Map<string, MountRecord[]>(serviceIds.map(id => [id, []]));
    if (!serviceIds.length) return out;
    for (const row of await em.find(Mount, ownedBy(serviceType, serviceIds), order)) out.get(row.serviceId)?.push(toRecord(row, this.#secrets()));
    return out;
  }

  /** The mount as the API answers it (viewOf). */
  view(record: MountRecord): MountView {
    return viewOf(record, this.ownerKinds());
  }

  viewSchema(): TSchema {
    return mountSchemas(this.ownerKinds()).MountView;
  }

  views(records: MountRecord[]): MountView[] {
    return records.map(r => this.view(r));
  }

  assertOwnVolume(name: string, workload: { organizationId: string; serverId: string | null }, em: EntityManager, field?: string): Promise<boolean> {
    return assertOwnVolume(name, workload, this.#workloads, em, field);
  }

  async removeForService(serviceType: string, serviceId: string, em: EntityManager): Promise<void> {
    await em.nativeDelete(Mount, ownedBy(serviceType, serviceId));
  }
}
