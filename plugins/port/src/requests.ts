// port.*: the published ports of the caller's organization's applications — published, one,
// changed, no longer published. The application must exist in the caller's organization (asked of
// the application plugin through the WorkloadRegistry); a port of another organization is
// NOT_FOUND. Request-scoped: the caller's organization and the request's transaction come from the
// container.
//
// A published port belongs to the host, not to an organization: the swarm's routing mesh
// answers an ingress port on every node, so no other port of the host may use it (same
// protocol), whoever owns it. Two host-mode ports of different applications may share a
// number (Swarm places their tasks on different nodes); of one application they may not.
import { conflict, newId, notFound, RequestScope } from '@berth/core';
import type { PortRecord, WorkloadRef } from '@berth/plugin-workloads';
import { Port, type PortRow } from './entities.ts';
import type { CreateInput, UpdateInput } from './schemas.ts';
import { toRecord } from './service.ts';

type Mapping = Pick<PortRecord, 'publishedPort' | 'publishMode' | 'targetPort' | 'protocol'>;

/** Registered asClass(...).scoped() as `portRequests`; the deploy pipeline uses the singleton `ports` directory. */
export class PortRequests extends RequestScope {
  /** Publishes a port of one of the organization's applications. */
  async create(input: CreateInput): Promise<PortRecord> {
    const app = await this.#owner(input.applicationId);
    const mapping: Mapping = { publishedPort: input.publishedPort, publishMode: input.publishMode ?? 'ingress', targetPort: input.targetPort, protocol: input.protocol ?? 'tcp' };
    await this.#assertFree(mapping, app.id, app.serverId, null);
    const row = this.em.create(Port, { portId: newId(), ...mapping, applicationId: app.id, serverId: app.serverId, organizationId: this.organizationId, createdAt: new Date() });
    await this.em.flush();
    return toRecord(row);
  }

  /** A published port. */
  async one(portId: string): Promise<PortRecord> {
    return toRecord(await this.#find(portId));
  }

  /** Changes what is given; the result must still be free on the host. */
  async update(input: UpdateInput): Promise<PortRecord> {
    const row = await this.#find(input.portId);
    const mapping: Mapping = {
      publishedPort: input.publishedPort ?? row.publishedPort,
      publishMode: input.publishMode ?? row.publishMode,
      targetPort: input.targetPort ?? row.targetPort,
      protocol: input.protocol ?? row.protocol,
    };
    await this.#assertFree(mapping, row.applicationId, row.serverId ?? null, row.portId);
    Object.assign(row, mapping);
    await this.em.flush();
    return toRecord(row);
  }

  /** Deletes the port; answers it as it was. */
  async remove(portId: string): Promise<PortRecord> {
    const record = toRecord(await this.#find(portId));
    await this.em.nativeDelete(Port, { portId, organizationId: this.organizationId });
    return record;
  }

  // ------------------------------------------------------------ internals
  /** The workload a port belongs to: the port API names it by applicationId, the id field of a kind that supports ports. */
  async #owner(id: string): Promise<WorkloadRef> {
    const { workloads } = this.cradle;
    const kind = workloads.supporting('ports').find(k => k.idField === 'applicationId');
    if (!kind) throw notFound('Application');
    return workloads.owner(kind.kind, id, this.organizationId, this.em);
  }

  /** TCP ports of the local host that Berth itself holds (its API), never given to an application. */
  get #reservedLocalPorts(): number[] {
    const { port } = this.cradle.config;
    // Port 0 means an ephemeral port chosen at listen time: nothing to reserve.
    return port ? [port] : [];
  }

  async #assertFree(m: Mapping, applicationId: string, serverId: string | null, self: string | null): Promise<void> {
    const name = `publishedPort ${m.publishedPort}/${m.protocol}`;
    if (serverId === null && m.protocol === 'tcp' && this.#reservedLocalPorts.includes(m.publishedPort)) throw conflict(`${name} is held by Berth itself on this host`);
    const same = await this.em.find(Port, { publishedPort: m.publishedPort, protocol: m.protocol, serverId });
    const clash = same.find(o => o.portId !== self && (o.publishMode === 'ingress' || m.publishMode === 'ingress' || o.applicationId === applicationId));
    if (clash) throw conflict(`${name} is already published ${clash.applicationId === applicationId ? 'by this application' : 'on this host'}`);
    // The host's other port holders (databases' external ports).
    const others = await this.cradle.hostPorts.holdsExcept('port', m.publishedPort, m.protocol, serverId, this.em);
    if (others.length) throw conflict(`${name} is already used on this host (by a database's external port)`);
  }

  #find(portId: string): Promise<PortRow> {
    return this.owned(Port, { portId }, 'Port');
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** port.* for the current request's caller (request scope only). */
    portRequests: PortRequests;
  }
}
