// What the domain plugin's services that act on the proxy are made with: the proxy's routing,
// the workloads that own domains, and the container (read when used: providers come later).
import type { Cradle } from '@berth/core';
import type { ProxyRouting } from './routing.ts';
import type { WorkloadOwners } from './workload-owner.ts';

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
