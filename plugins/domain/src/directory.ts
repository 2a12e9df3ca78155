// What the workload kit and the workload plugins see of the domain plugin (`domains` in the
// container): a workload's domains, redirects and basic-auth users as its `one` lists them, and
// their removal, with the workload's routes, when the workload is deleted.
import type { EntityManager, ProxyRoute } from '@berth/core';
import type { AttachedDomain, DomainDirectory, WorkloadRef } from '@berth/plugin-workloads';
import { Domain, Redirect, Security } from './entities.ts';
import type { DomainService } from './domain-service.ts';
import type { RedirectService } from './redirect-service.ts';
import type { ProxyRouting } from './routing.ts';
import { DomainView, RedirectView, SecurityView } from './schemas.ts';
import type { SecurityService } from './security-service.ts';

export class ProxyRecordDirectory implements DomainDirectory {
  readonly #deps: { routing: ProxyRouting; domains: DomainService; redirects: RedirectService; security: SecurityService };

  constructor(deps: { routing: ProxyRouting; domains: DomainService; redirects: RedirectService; security: SecurityService }) {
    this.#deps = deps;
  }

  async forService(kind: string, id: string, em: EntityManager) {
    const where = { serviceType: kind, serviceId: id };
    const order = { orderBy: { createdAt: 'asc' } } as const;
    const { domains, redirects, security } = this.#deps;
    return {
      domains: (await em.find(Domain, where, order)).map(r => domains.view(r)),
      redirects: (await em.find(Redirect, where, order)).map(r => redirects.view(r)),
      security: (await em.find(Security, where, order)).map(r => security.view(r)),
    };
  }

  viewSchemas() {
    return { domains: DomainView, redirects: RedirectView, security: SecurityView };
  }

  async removeForService(workload: WorkloadRef, em: EntityManager): Promise<void> {
    const where = { serviceType: workload.kind, serviceId: workload.id };
    const domains = await em.nativeDelete(Domain, where);
    await em.nativeDelete(Redirect, where);
    await em.nativeDelete(Security, where);
    // A workload that had no domain has nothing on the proxy: it is not started for it.
    if (domains) await this.#deps.routing.forget(workload.appName, workload.serverId);
  }

  async attach(owner: WorkloadRef, domain: AttachedDomain, em: EntityManager): Promise<string> {
    return (await this.#deps.domains.attach(owner, domain, em)).domainId;
  }

  ownsAttached(kind: string, find: (id: string, em: EntityManager) => Promise<WorkloadRef | null>): void {
    this.#deps.routing.ownsAttached(kind, find);
  }

  async routesOf(workload: WorkloadRef, em: EntityManager): Promise<ProxyRoute[]> {
    return (await this.#deps.routing.configOf(workload, em)).routes;
  }
}
