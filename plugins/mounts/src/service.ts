// Mounts of workloads, and the MountDirectory the deploy pipelines read. The workload must
// exist in the caller's organization (asked of the plugin that owns its kind, through the
// WorkloadRegistry); a mount of another organization is NOT_FOUND, never FORBIDDEN. A bind
// mount reaches the host: the operator's host access policy decides (core's HostAccess).
import path from 'node:path';
import type { HostAccess } from '@berth/plugin-workloads';
import { conflict, forbidden, invalidField, newId, notFound, type Cradle, type EntityManager, type Principal, type Role, type SecretBox, type TSchema } from '@berth/core';
import { assertMountable, volumeLabels, type ContainerHosts, type MountDirectory, type MountRecord, type WorkloadRegistry } from '@berth/plugin-workloads';
import { Mount, type MountRow } from './entities.ts';
import { assertOwnHostResource, assertOwnVolume } from './host-resources.ts';
import { checkMount, type MountRules, type StoredMount } from './paths.ts';
import { mountSchemas, ownerFieldsOf, type ContainerVolume, type CreateInput, type MountOwnerKind, type MountView, type UpdateInput } from './schemas.ts';

const ownedBy = (serviceType: string, ids: string | string[]) => ({ serviceType, serviceId: Array.isArray(ids) ? { $in: ids } : ids });
const order = { orderBy: { createdAt: 'asc', mountId: 'asc' } } as const;

/** Who asks: the organization every read and write is confined to, and the caller's role there. */
export interface Caller {
  organizationId: string;
  role: Role;
  /** The whole caller, for the host access policy. */
  principal: Principal;
}

export interface MountServiceDeps {
  workloads: WorkloadRegistry;
  /** Resolved on use: the kernel's SecretBox and container hosts. */
  secrets: () => SecretBox;
  hosts: () => ContainerHosts;
  hostAccess: () => HostAccess;
  /** What bind mounts may reach, beyond the built-in deny list (Berth's data directory). */
  rules?: MountRules;
}

export class MountService implements MountDirectory {
  readonly #workloads: WorkloadRegistry;
  readonly #secrets: () => SecretBox;
  readonly #hosts: () => ContainerHosts;
  readonly #rules: MountRules;
  readonly #hostAccess: () => HostAccess;

  constructor(deps: MountServiceDeps) {
    this.#hostAccess = deps.hostAccess;
    this.#rules = deps.rules ?? {};
    this.#workloads = deps.workloads;
    this.#secrets = deps.secrets;
    this.#hosts = deps.hosts;
  }

  /** The registered kinds that support mounts. */
  ownerKinds(): MountOwnerKind[] {
    return this.#workloads.supporting('mounts').map(k => ({ kind: k.kind, idField: k.idField }));
  }

  // ------------------------------------------------------------ MountDirectory
  async forServices(serviceType: string, serviceIds: string[], em: EntityManager): Promise<Map<string, MountRecord[]>> {
    const out = new Map<string, MountRecord[]>(serviceIds.map(id => [id, []]));
    if (!serviceIds.length) return out;
    for (const row of await em.find(Mount, ownedBy(serviceType, serviceIds), order)) out.get(row.serviceId)?.push(this.#toRecord(row));
    return out;
  }

  /** The mount as the API answers it: the owner under its kind's id field too (the peer's applicationId, postgresId...), null under the others. */
  view(record: MountRecord): MountView {
    const { serviceId, volumeAdopted: _, ...rest } = record;
    const kinds = this.ownerKinds();
    const owner = kinds.find(k => k.kind === record.serviceType)?.idField;
    const owners = Object.fromEntries(ownerFieldsOf(kinds).map(f => [f, f === owner ? serviceId : null]));
    return { ...rest, ...owners } as MountView;
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

  /** The kind that may own mounts, or a validation error naming the field. */
  #mountable(serviceType: string | undefined, field: string) {
    const kinds = this.#workloads.supporting('mounts');
    const kind = serviceType === undefined ? (kinds.find(k => k.kind === 'application') ?? kinds[0]) : kinds.find(k => k.kind === serviceType); // kind-names: the peer's default serviceType, not the kind that registered first
    if (!kind) throw invalidField(field, `must be one of ${kinds.map(k => k.kind).join(', ')}`);
    return kind;
  }

  // ------------------------------------------------------------ mounts.*
  async create(input: CreateInput, caller: Caller, em: EntityManager): Promise<MountRecord> {
    const serviceType = this.#mountable(input.serviceType, 'serviceType').kind;
    const mount = checkMount(input, this.#rules);
    if (mount.type === 'bind') await this.#hostAccess().assertBindMount(caller.principal, mount.hostPath!);
    const workload = await this.#workloads.owner(serviceType, input.serviceId, caller.organizationId, em);
    await this.#assertFree(mount, serviceType, input.serviceId, null, em);
    await assertOwnHostResource(mount, workload, this.#workloads, em);
    await this.#assertMountableVolume(mount, workload, caller.organizationId, false);
    const row = em.create(Mount, {
      mountId: newId(),
      ...mount,
      content: this.#seal(mount.content),
      serviceType,
      serviceId: input.serviceId,
      organizationId: caller.organizationId,
      createdAt: new Date(),
    });
    await em.flush();
    return this.#toRecord(row);
  }

  async one(mountId: string, organizationId: string, em: EntityManager): Promise<MountRecord> {
    return this.#toRecord(await this.#find(mountId, organizationId, em));
  }

  /** Changes what is given; the result is checked as a whole (type, paths, owner). */
  async update(input: UpdateInput, caller: Caller, em: EntityManager): Promise<MountRecord> {
    const row = await this.#find(input.mountId, caller.organizationId, em);
    const given = <K extends 'hostPath' | 'volumeName' | 'filePath'>(k: K) => (input[k] !== undefined ? input[k] : row[k]);
    const mount = checkMount(
      {
        type: input.type ?? row.type,
        hostPath: given('hostPath'),
        volumeName: given('volumeName'),
        filePath: given('filePath'),
        content: input.content !== undefined ? input.content : this.#open(row.content),
        mountPath: input.mountPath ?? row.mountPath,
      },
      this.#rules,
    );
    if (row.type === 'bind') assertMayBind(caller);
    if (mount.type === 'bind') await this.#hostAccess().assertBindMount(caller.principal, mount.hostPath!);

    // A mount has one owner: the id under its serviceType's id field.
    const kind = this.#mountable(input.serviceType ?? row.serviceType, 'serviceType');
    const serviceType = kind.kind;
    const key = kind.idField;
    for (const other of this.#workloads.supporting('mounts')) {
      if (other.idField !== key && typeof input[other.idField] === 'string') throw invalidField(other.idField, `the mount belongs to a ${serviceType} (serviceType); set serviceType to move it`);
    }
    const owner = input[key];
    const serviceId = typeof owner === 'string' ? owner : owner === undefined && serviceType === row.serviceType ? row.serviceId : null;
    if (!serviceId) throw invalidField(key, `required: the ${serviceType} the mount belongs to`);
    const workload = await this.#workloads.owner(serviceType, serviceId, caller.organizationId, em);
    await this.#assertFree(mount, serviceType, serviceId, row.mountId, em);
    await assertOwnHostResource(mount, workload, this.#workloads, em);
    // Adoption covers the volume the mount had at upgrade, not one it is changed to.
    const volumeAdopted = row.volumeAdopted && mount.type === 'volume' && mount.volumeName === row.volumeName;
    await this.#assertMountableVolume(mount, workload, caller.organizationId, volumeAdopted);

    Object.assign(row, { ...mount, content: this.#seal(mount.content), serviceType, serviceId, volumeAdopted });
    await em.flush();
    return this.#toRecord(row);
  }

  /** Deletes the mount; answers it as it was. */
  async remove(mountId: string, organizationId: string, em: EntityManager): Promise<MountRecord> {
    const record = this.#toRecord(await this.#find(mountId, organizationId, em));
    await em.nativeDelete(Mount, { mountId, organizationId });
    return record;
  }

  /** The workload's mounts, oldest first; NOT_FOUND unless the workload is the organization's. */
  async listByService(serviceType: string, serviceId: string, organizationId: string, em: EntityManager): Promise<MountRecord[]> {
    await this.#workloads.owner(serviceType, serviceId, organizationId, em);
    const rows = await em.find(Mount, { ...ownedBy(serviceType, serviceId), organizationId }, order);
    return rows.map(row => this.#toRecord(row));
  }

  /**
   * The named volumes mounted in the workload's running container, as the engine reports
   * them (what volume backups choose from); none while nothing runs. The workload is named by
   * its kind's id field (the peer's operation takes an applicationId).
   */
  async namedVolumesOf(idField: string, id: string, organizationId: string, em: EntityManager): Promise<ContainerVolume[]> {
    const kind = this.#workloads.kinds().find(k => k.idField === idField);
    if (!kind) throw invalidField(idField, 'no kind of workload is identified by this field');
    const app = await this.#workloads.owner(kind.kind, id, organizationId, em);
    const hosts = this.#hosts();
    const docker = await (await hosts.of(app.serverId)).engine(); // the workload's host
    const containers = await hosts.call("list the application's containers", () => docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${app.appName}`] } }));
    const mounts = containers[0]?.Mounts ?? [];
    return mounts
      .filter(m => m.Type === 'volume' && m.Source !== '')
      .map(m => ({ Type: m.Type, Name: m.Name, Source: m.Source, Destination: m.Destination, Driver: m.Driver, Mode: m.Mode, RW: m.RW, Propagation: m.Propagation }));
  }

  // ------------------------------------------------------------ internals
  /**
   * A named volume that exists on the workload's host and that its organization may not mount
   * is refused now (409 naming it) when the engine of its host (its server's, or this machine's)
   * answers. Every deploy checks again (toServiceMounts), so an engine that cannot be asked now
   * refuses nothing.
   */
  async #assertMountableVolume(mount: StoredMount, workload: { serverId?: string | null }, organizationId: string, adopted: boolean): Promise<void> {
    if (mount.type !== 'volume' || !mount.volumeName) return;
    const hosts = this.#hosts();
    let labels: Record<string, string> | null;
    try {
      labels = await volumeLabels(await (await hosts.of(workload.serverId ?? null)).engine(), hosts, mount.volumeName);
    } catch {
      return;
    }
    if (labels) assertMountable(mount.volumeName, labels, organizationId, { adopted });
  }

  /** One workload cannot mount two things at one path, nor keep two file mounts in one file. */
  async #assertFree(mount: StoredMount, serviceType: string, serviceId: string, self: string | null, em: EntityManager): Promise<void> {
    const others = (await em.find(Mount, ownedBy(serviceType, serviceId))).filter(o => o.mountId !== self);
    const target = sameTarget(mount.mountPath);
    if (others.some(o => sameTarget(o.mountPath) === target)) throw conflict(`mountPath ${mount.mountPath} is already mounted in this ${serviceType}`);
    if (mount.filePath !== null && others.some(o => o.filePath === mount.filePath)) throw conflict(`filePath ${mount.filePath} is already the file of another mount of this ${serviceType}`);
  }

  async #find(mountId: string, organizationId: string, em: EntityManager): Promise<MountRow> {
    const row = await em.findOne(Mount, { mountId, organizationId });
    if (!row) throw notFound('Mount');
    return row;
  }

  #seal(content: string | null | undefined): string | null {
    return content === null || content === undefined ? null : this.#secrets().encrypt(content);
  }

  #open(sealed: string | null | undefined): string | null {
    return sealed === null || sealed === undefined ? null : this.#secrets().decrypt(sealed);
  }

  #toRecord(row: MountRow): MountRecord {
    return {
      mountId: row.mountId,
      type: row.type,
      hostPath: row.hostPath ?? null,
      volumeName: row.volumeName ?? null,
      volumeAdopted: row.volumeAdopted,
      filePath: row.filePath ?? null,
      content: this.#open(row.content),
      mountPath: row.mountPath,
      serviceType: row.serviceType,
      serviceId: row.serviceId,
    };
  }
}

/** The engine's view of a container path: "/data/", "/data//" and "/./data" are all "/data". */
const sameTarget = (mountPath: string) => path.posix.normalize(mountPath).replace(/(.)\/+$/, '$1');

function assertMayBind(caller: Caller): void {
  if (caller.role === 'member') throw forbidden('Only admins can create or change bind mounts (a host path reaches the host)');
}

/**
 * mounts.* for one request: the service confined to the caller (organization and role) and
 * the request's unit of work, answering mounts as the API shows them. Registered
 * request-scoped as `callerMounts`; the deploy pipelines keep using the singleton `mounts`.
 */
export const callerMounts =
  (mounts: MountService) =>
  ({ principal, em }: Cradle) => {
    const caller: Caller = { organizationId: principal!.organizationId, role: principal!.role, principal: principal! };
    const { organizationId } = caller;
    return {
      /** Adds a mount to one of the organization's workloads (bind mounts: as the host access policy allows). */
      create: async (input: CreateInput) => mounts.view(await mounts.create(input, caller, em)),
      /** A mount of the organization. */
      one: async (mountId: string) => mounts.view(await mounts.one(mountId, organizationId, em)),
      /** Changes a mount. */
      update: async (input: UpdateInput) => mounts.view(await mounts.update(input, caller, em)),
      /** Deletes a mount. */
      remove: async (mountId: string) => mounts.view(await mounts.remove(mountId, organizationId, em)),
      /** A workload's mounts, oldest first. */
      listByService: async (serviceType: string, serviceId: string) => mounts.views(await mounts.listByService(serviceType, serviceId, organizationId, em)),
      /** The named volumes in the workload's running container. */
      namedVolumesOf: (idField: string, id: string) => mounts.namedVolumesOf(idField, id, organizationId, em),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    /** mounts.* for the current request's caller (request scope only). */
    callerMounts: ReturnType<ReturnType<typeof callerMounts>>;
  }
}
