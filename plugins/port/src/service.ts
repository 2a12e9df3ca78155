// Published ports of applications, and the PortDirectory the deploy pipeline reads. The
// application must exist in the caller's organization (asked of the application plugin
// through the WorkloadRegistry); a port of another organization is NOT_FOUND.
//
// A published port belongs to the host, not to an organization: the swarm's routing mesh
// answers an ingress port on every node, so no other port of the host may use it (same
// protocol), whoever owns it. Two host-mode ports of different applications may share a
// number (Swarm places their tasks on different nodes); of one application they may not.
import { conflict, newId, notFound, type Cradle, type EntityManager, type TSchema } from '@berth/core';
import { Port, type PortRow } from './entities.ts';
import { PortView, type CreateInput, type UpdateInput } from './schemas.ts';
import { type HostPorts, type PortHold, type PortDirectory, type PortRecord, type WorkloadRef, type WorkloadRegistry } from '@berth/plugin-workloads';

const order = { orderBy: { createdAt: 'asc', portId: 'asc' } } as const;

type Mapping = Pick<PortRecord, 'publishedPort' | 'publishMode' | 'targetPort' | 'protocol'>;

export interface PortServiceDeps {
  workloads: WorkloadRegistry;
  /** TCP ports of the local host that Berth itself holds (its API), never given to an application. */
  reservedLocalPorts?: () => number[];
  /** The host's other port holders (databases' external ports). */
  hostPorts?: () => HostPorts;
}

export class PortService implements PortDirectory {
  readonly #workloads: WorkloadRegistry;
  readonly #reserved: () => number[];
  readonly #hostPorts: (() => HostPorts) | undefined;

  constructor(deps: PortServiceDeps) {
    this.#workloads = deps.workloads;
    this.#reserved = deps.reservedLocalPorts ?? (() => []);
    this.#hostPorts = deps.hostPorts;
  }

  /** The ports published on the host (as a HostPorts holder). */
  async holds(port: number, protocol: 'tcp' | 'udp', serverId: string | null, em: EntityManager): Promise<PortHold[]> {
    const rows = await em.find(Port, { publishedPort: port, protocol, serverId });
    return rows.map(r => ({ kind: 'port', id: r.portId }));
  }

  // ------------------------------------------------------------ PortDirectory
  viewSchema(): TSchema {
    return PortView;
  }

  async forApplications(applicationIds: string[], em: EntityManager): Promise<Map<string, PortRecord[]>> {
    const out = new Map<string, PortRecord[]>(applicationIds.map(id => [id, []]));
    if (!applicationIds.length) return out;
    for (const row of await em.find(Port, { applicationId: { $in: applicationIds } }, order)) out.get(row.applicationId)?.push(toRecord(row));
    return out;
  }

  async removeForApplication(applicationId: string, em: EntityManager): Promise<void> {
    await em.nativeDelete(Port, { applicationId });
  }

  // ------------------------------------------------------------ port.*
  async create(input: CreateInput, organizationId: string, em: EntityManager): Promise<PortRecord> {
    const app = await this.#owner(input.applicationId, organizationId, em);
    const mapping: Mapping = { publishedPort: input.publishedPort, publishMode: input.publishMode ?? 'ingress', targetPort: input.targetPort, protocol: input.protocol ?? 'tcp' };
    await this.#assertFree(mapping, app.id, app.serverId, null, em);
    const row = em.create(Port, { portId: newId(), ...mapping, applicationId: app.id, serverId: app.serverId, organizationId, createdAt: new Date() });
    await em.flush();
    return toRecord(row);
  }

  async one(portId: string, organizationId: string, em: EntityManager): Promise<PortRecord> {
    return toRecord(await this.#find(portId, organizationId, em));
  }

  /** Changes what is given; the result must still be free on the host. */
  async update(input: UpdateInput, organizationId: string, em: EntityManager): Promise<PortRecord> {
    const row = await this.#find(input.portId, organizationId, em);
    const mapping: Mapping = {
      publishedPort: input.publishedPort ?? row.publishedPort,
      publishMode: input.publishMode ?? row.publishMode,
      targetPort: input.targetPort ?? row.targetPort,
      protocol: input.protocol ?? row.protocol,
    };
    await this.#assertFree(mapping, row.applicationId, row.serverId ?? null, row.portId, em);
    Object.assign(row, mapping);
    await em.flush();
    return toRecord(row);
  }

  /** Deletes the port; answers it as it was. */
  async remove(portId: string, organizationId: string, em: EntityManager): Promise<PortRecord> {
    const record = toRecord(await this.#find(portId, organizationId, em));
    await em.nativeDelete(Port, { portId, organizationId });
    return record;
  }

  // ------------------------------------------------------------ internals
  /** The workload a port belongs to: the port API names it by applicationId, the id field of a kind that supports ports. */
  async #owner(id: string, organizationId: string, em: EntityManager): Promise<WorkloadRef> {
    const kind = this.#workloads.supporting('ports').find(k => k.idField === 'applicationId');
    if (!kind) throw notFound('Application');
    return this.#workloads.owner(kind.kind, id, organizationId, em);
  }

  async #assertFree(m: Mapping, applicationId: string, serverId: string | null, self: string | null, em: EntityManager): Promise<void> {
    const name = `publishedPort ${m.publishedPort}/${m.protocol}`;
    if (serverId === null && m.protocol === 'tcp' && this.#reserved().includes(m.publishedPort)) throw conflict(`${name} is held by Berth itself on this host`);
    const same = await em.find(Port, { publishedPort: m.publishedPort, protocol: m.protocol, serverId });
    const clash = same.find(o => o.portId !== self && (o.publishMode === 'ingress' || m.publishMode === 'ingress' || o.applicationId === applicationId));
    if (clash) throw conflict(`${name} is already published ${clash.applicationId === applicationId ? 'by this application' : 'on this host'}`);
    const others = await this.#hostPorts?.().holdsExcept('port', m.publishedPort, m.protocol, serverId, em);
    if (others?.length) throw conflict(`${name} is already used on this host (by a database's external port)`);
  }

  async #find(portId: string, organizationId: string, em: EntityManager): Promise<PortRow> {
    const row = await em.findOne(Port, { portId, organizationId });
    if (!row) throw notFound('Port');
    return row;
  }
}

function toRecord(row: PortRow): PortRecord {
  return { portId: row.portId, publishedPort: row.publishedPort, publishMode: row.publishMode, targetPort: row.targetPort, protocol: row.protocol, applicationId: row.applicationId };
}

/**
 * port.* for one request: the service confined to the caller's organization and the
 * request's unit of work. Registered request-scoped as `callerPorts`; the deploy pipeline
 * keeps using the singleton `ports` directory.
 */
export const callerPorts =
  (ports: PortService) =>
  ({ principal, em }: Cradle) => {
    const organizationId = principal!.organizationId;
    return {
      /** Publishes a port of one of the organization's applications. */
      create: (input: CreateInput) => ports.create(input, organizationId, em),
      /** A published port. */
      one: (portId: string) => ports.one(portId, organizationId, em),
      /** Changes a published port. */
      update: (input: UpdateInput) => ports.update(input, organizationId, em),
      /** Stops publishing a port. */
      remove: (portId: string) => ports.remove(portId, organizationId, em),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    /** port.* for the current request's caller (request scope only). */
    callerPorts: ReturnType<ReturnType<typeof callerPorts>>;
  }
}
