// What the domain plugin's services that act on the proxy are made with: the proxy's routing,
// the workloads that own domains, and the container (read when used: providers come later). The
// request-scoped ones (domain.*, redirects.*, security.*, certificates.*) start from ProxyRequests.
import { RequestScope, type Cradle } from '@berth/core';
import type { WorkloadRef } from '@berth/plugin-workloads';
import type { ProxyRouting } from './routing.ts';
import { WorkloadOwners } from './workload-owner.ts';

export interface ProxyDeps {
  routing: ProxyRouting;
  owners: WorkloadOwners;
  cradle: () => Cradle;
}

export abstract class ProxyBound {
  protected readonly routing: ProxyRouting;
  protected readonly owners: WorkloadOwners;
  protected readonly cradle: () => Cradle;

  constructor(deps: ProxyDeps) {
    this.routing = deps.routing;
    this.owners = deps.owners;
    this.cradle = deps.cradle;
  }
}

/** A stored record of a workload's routes (a domain, a redirect, a basic-auth user): its workload's kind and id. */
interface RouteRecord {
  serviceType: string;
  serviceId: string;
}

/**
 * What a request's own service that acts on the proxy starts from: the kernel's RequestScope (the
 * caller's organization and the request's transaction, from the request's scope), the proxy's
 * routing and the workloads that own its records. A change of a workload's routes is written
 * first, then the workload's whole route set is applied to the proxy again (routing.ts).
 */
export abstract class ProxyRequests extends RequestScope {
  #owners: WorkloadOwners | undefined;

  protected get routing(): ProxyRouting {
    return this.cradle.proxyRouting;
  }

  protected get owners(): WorkloadOwners {
    return (this.#owners ??= new WorkloadOwners(() => this.cradle));
  }

  /** What ties a new record of a workload's routes to the workload and the caller's organization. */
  protected ownedBy(workload: WorkloadRef) {
    return { serviceType: workload.kind, serviceId: workload.id, organizationId: this.organizationId, createdAt: new Date() };
  }

  /** Stores a record just created for the workload and applies the workload's routes; answers the record. */
  protected async addRoute<R extends RouteRecord>(row: R, workload: WorkloadRef): Promise<R> {
    await this.em.flush();
    await this.routing.sync(workload, this.em);
    return row;
  }

  /** Changes a stored record (or removes it) and applies the routes of the workload it belongs to; answers the record as it is now (as it was, removed). */
  protected async changeRoute<R extends RouteRecord>(row: R, change: Partial<R> | 'remove'): Promise<R> {
    if (change === 'remove') this.em.remove(row);
    else Object.assign(row, change);
    await this.em.flush();
    await this.routing.syncOwnerOf(row, this.em);
    return row;
  }
}
