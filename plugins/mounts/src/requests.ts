// mounts.*: the mounts of the caller's organization's workloads — added, one, changed, removed, a
// workload's, and the named volumes in its running container. The workload must exist in the
// caller's organization (asked of the plugin that owns its kind, through the WorkloadRegistry); a
// mount of another organization is NOT_FOUND, never FORBIDDEN. A bind mount reaches the host: the
// operator's host access policy decides (core's HostAccess). Request-scoped: the caller, their
// organization and the request's transaction come from the container; mounts are answered as the
// API shows them.
import path from 'node:path';
import { conflict, forbidden, invalidField, newId, notFound, RequestScope, type Role } from '@berth/core';
import { assertMountable, volumeLabels, type MountRecord } from '@berth/plugin-workloads';
import { Mount, type MountRow } from './entities.ts';
import { assertOwnHostResource } from './host-resources.ts';
import { checkMount, type StoredMount } from './paths.ts';
import type { ContainerVolume, CreateInput, MountView, UpdateInput } from './schemas.ts';
import { openContent, order, ownedBy, ownerKindsOf, toRecord, viewOf } from './service.ts';

/** Registered asClass(...).scoped() as `mountRequests`; the deploy pipelines use the singleton `mounts`. */
export class MountRequests extends RequestScope {
  /** Adds a mount to one of the organization's workloads (bind mounts: as the host access policy allows). */
  async create(input: CreateInput): Promise<MountView> {
    const { workloads } = this.cradle;
    const serviceType = this.#mountable(input.serviceType, 'serviceType').kind;
    const mount = checkMount(input);
    if (mount.type === 'bind') await this.cradle.hostAccess.assertBindMount(this.principal, mount.hostPath!);
    const workload = await workloads.owner(serviceType, input.serviceId, this.organizationId, this.em);
    await this.#assertFree(mount, serviceType, input.serviceId, null);
    await assertOwnHostResource(mount, workload, workloads, this.em);
    await this.#assertMountableVolume(mount, workload, false);
    const row = this.em.create(Mount, {
      mountId: newId(),
      ...mount,
      content: this.#seal(mount.content),
      serviceType,
      serviceId: input.serviceId,
      organizationId: this.organizationId,
      createdAt: new Date(),
    });
    await this.em.flush();
    return this.#view(row);
  }

  /** A mount of the organization. */
  async one(mountId: string): Promise<MountView> {
    return this.#view(await this.#find(mountId));
  }

  /** Changes what is given; the result is checked as a whole (type, paths, owner). */
  async update(input: UpdateInput): Promise<MountView> {
    const { workloads } = this.cradle;
    const row = await this.#find(input.mountId);
    const given = <K extends 'hostPath' | 'volumeName' | 'filePath'>(k: K) => (input[k] !== undefined ? input[k] : row[k]);
    const mount = checkMount({
      type: input.type ?? row.type,
      hostPath: given('hostPath'),
      volumeName: given('volumeName'),
      filePath: given('filePath'),
      content: input.content !== undefined ? input.content : openContent(row.content, this.cradle.secrets),
      mountPath: input.mountPath ?? row.mountPath,
    });
    if (row.type === 'bind') assertMayBind(this.principal.role);
    if (mount.type === 'bind') await this.cradle.hostAccess.assertBindMount(this.principal, mount.hostPath!);

    // A mount has one owner: the id under its serviceType's id field.
    const kind = this.#mountable(input.serviceType ?? row.serviceType, 'serviceType');
    const serviceType = kind.kind;
    const key = kind.idField;
    for (const other of workloads.supporting('mounts')) {
      if (other.idField !== key && typeof input[other.idField] === 'string') throw invalidField(other.idField, `the mount belongs to a ${serviceType} (serviceType); set serviceType to move it`);
    }
    const owner = input[key];
    const serviceId = typeof owner === 'string' ? owner : owner === undefined && serviceType === row.serviceType ? row.serviceId : null;
    if (!serviceId) throw invalidField(key, `required: the ${serviceType} the mount belongs to`);
    const workload = await workloads.owner(serviceType, serviceId, this.organizationId, this.em);
    await this.#assertFree(mount, serviceType, serviceId, row.mountId);
    await assertOwnHostResource(mount, workload, workloads, this.em);
    // Adoption covers the volume the mount had at upgrade, not one it is changed to.
    const volumeAdopted = row.volumeAdopted && mount.type === 'volume' && mount.volumeName === row.volumeName;
    await this.#assertMountableVolume(mount, workload, volumeAdopted);

    Object.assign(row, { ...mount, content: this.#seal(mount.content), serviceType, serviceId, volumeAdopted });
    await this.em.flush();
    return this.#view(row);
  }

  /** Deletes the mount; answers it as it was. */
  async remove(mountId: string): Promise<MountView> {
    const view = this.#view(await this.#find(mountId));
    await this.em.nativeDelete(Mount, { mountId, organizationId: this.organizationId });
    return view;
  }

  /** The workload's mounts, oldest first; NOT_FOUND unless the workload is the organization's. */
  async listByService(serviceType: string, serviceId: string): Promise<MountView[]> {
    await this.cradle.workloads.owner(serviceType, serviceId, this.organizationId, this.em);
    const rows = await this.em.find(Mount, { ...ownedBy(serviceType, serviceId), organizationId: this.organizationId }, order);
    return rows.map(row => this.#view(row));
  }

  /**
   * The named volumes mounted in the workload's running container, as the engine reports
   * them (what volume backups choose from); none while nothing runs. The workload is named by
   * its kind's id field (the peer's operation takes an applicationId).
   */
  async namedVolumesOf(idField: string, id: string): Promise<ContainerVolume[]> {
    const { workloads, hosts } = this.cradle;
    const kind = workloads.kinds().find(k => k.idField === idField);
    if (!kind) throw invalidField(idField, 'no kind of workload is identified by this field');
    const app = await workloads.owner(kind.kind, id, this.organizationId, this.em);
    const docker = await (await hosts.of(app.serverId)).engine(); // the workload's host
    const containers = await hosts.call("list the application's containers", () => docker.listContainers({ filters: { label: [`com.docker.swarm.service.name=${app.appName}`] } }));
    const mounts = containers[0]?.Mounts ?? [];
    return mounts
      .filter(m => m.Type === 'volume' && m.Source !== '')
      .map(m => ({ Type: m.Type, Name: m.Name, Source: m.Source, Destination: m.Destination, Driver: m.Driver, Mode: m.Mode, RW: m.RW, Propagation: m.Propagation }));
  }

  // ------------------------------------------------------------ internals
  /** The kind that may own mounts, or a validation error naming the field. */
  #mountable(serviceType: string | undefined, field: string) {
    const kinds = this.cradle.workloads.supporting('mounts');
    const kind = serviceType === undefined ? (kinds.find(k => k.kind === 'application') ?? kinds[0]) : kinds.find(k => k.kind === serviceType); // kind-names: the peer's default serviceType, not the kind that registered first
    if (!kind) throw invalidField(field, `must be one of ${kinds.map(k => k.kind).join(', ')}`);
    return kind;
  }

  /**
   * A named volume that exists on the workload's host and that its organization may not mount
   * is refused now (409 naming it) when the engine of its host (its server's, or this machine's)
   * answers. Every deploy checks again (toServiceMounts), so an engine that cannot be asked now
   * refuses nothing.
   */
  async #assertMountableVolume(mount: StoredMount, workload: { serverId?: string | null }, adopted: boolean): Promise<void> {
    if (mount.type !== 'volume' || !mount.volumeName) return;
    const { hosts } = this.cradle;
    let labels: Record<string, string> | null;
    try {
      labels = await volumeLabels(await (await hosts.of(workload.serverId ?? null)).engine(), hosts, mount.volumeName);
    } catch {
      return;
    }
    if (labels) assertMountable(mount.volumeName, labels, this.organizationId, { adopted });
  }

  /** One workload cannot mount two things at one path, nor keep two file mounts in one file. */
  async #assertFree(mount: StoredMount, serviceType: string, serviceId: string, self: string | null): Promise<void> {
    const others = (await this.em.find(Mount, ownedBy(serviceType, serviceId))).filter(o => o.mountId !== self);
    const target = sameTarget(mount.mountPath);
    if (others.some(o => sameTarget(o.mountPath) === target)) throw conflict(`mountPath ${mount.mountPath} is already mounted in this ${serviceType}`);
    if (mount.filePath !== null && others.some(o => o.filePath === mount.filePath)) throw conflict(`filePath ${mount.filePath} is already the file of another mount of this ${serviceType}`);
  }

  async #find(mountId: string): Promise<MountRow> {
    const row = await this.em.findOne(Mount, { mountId, organizationId: this.organizationId });
    if (!row) throw notFound('Mount');
    return row;
  }

  #seal(content: string | null | undefined): string | null {
    return content === null || content === undefined ? null : this.cradle.secrets.encrypt(content);
  }

  /** The mount as the API answers it, with its owner under its kind's id field. */
  #view(row: MountRow): MountView {
    return viewOf(toRecord(row, this.cradle.secrets), ownerKindsOf(this.cradle.workloads));
  }
}

/** The engine's view of a container path: "/data/", "/data//" and "/./data" are all "/data". */
const sameTarget = (mountPath: string) => path.posix.normalize(mountPath).replace(/(.)\/+$/, '$1');

function assertMayBind(role: Role): void {
  if (role === 'member') throw forbidden('Only admins can create or change bind mounts (a host path reaches the host)');
}

declare module '@berth/core' {
  interface Cradle {
    /** mounts.* for the current request's caller (request scope only). */
    mountRequests: MountRequests;
  }
}
