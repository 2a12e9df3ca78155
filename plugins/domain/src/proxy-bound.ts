// What the domain plugin's services that act on the proxy are made with: the proxy's routing,
// the workloads that own domains, and the container (read when used: providers come later). The
// request-scoped ones (domain.*, redirects.*, security.*, certificates.*) start from ProxyRequests.
import { RequestScope, type Cradle } from '@berth/core';
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

/**
 * What a request's own service that acts on the proxy starts from: the kernel's RequestScope (the
 * caller's organization and the request's transaction, from the request's scope), the proxy's
 * routing and the workloads that own its records.
 */
export abstract class ProxyRequests extends RequestScope {
  #owners: WorkloadOwners | undefined;

  protected get routing(): ProxyRouting {
    return this.cradle.proxyRouting;
  }

  protected get owners(): WorkloadOwners {
    return (this.#owners ??= new WorkloadOwners(() => this.cradle));
  }
}
