// domain.*: domains of the caller's organization's workloads — added, one, an application's or a
// compose stack's, changed, removed. Every change is applied to the proxy at once (no redeploy of
// the workload). Request-scoped: the caller's organization and the request's transaction come from
// the container.
import { badRequest } from '@berth/core';
import type { WorkloadRef } from '@berth/plugin-workloads';
import { assertHostFree, checkedDomain, nextConfigKey } from './domain-service.ts';
import { Domain, type DomainRow } from './entities.ts';
import { ProxyRequests } from './proxy-bound.ts';
import type { CreateDomainInput, DomainView, DomainWithApplication, DomainWithCompose, UpdateDomainInput } from './schemas.ts';

/** Registered asClass(...).scoped() as `domainRequests`; the rest of Berth uses the singleton `domainService` (and the `domains` directory). */
export class DomainRequests extends ProxyRequests {
  /** Adds a domain to a workload (applicationId or composeId) and routes it. */
  async create(input: CreateDomainInput): Promise<DomainView> {
    const workload = await this.owners.fromInput(input, this.organizationId, this.em);
    const fields = checkedDomain({
      host: input.host,
      path: input.path ?? '/',
      port: input.port ?? 3000,
      https: input.https ?? false,
      certificateType: input.certificateType ?? 'none',
      customCertResolver: input.customCertResolver ?? null,
      customEntrypoint: input.customEntrypoint ?? null,
      serviceName: input.serviceName ?? null,
      internalPath: input.internalPath ?? '/',
      stripPath: input.stripPath ?? false,
      middlewares: input.middlewares ?? null,
    });
    await assertHostFree(fields.host, fields.path, null, this.em);
    const row = this.em.create(Domain, {
      ...fields,
      domainType: input.domainType ?? workload.kind,
      enabled: input.enabled ?? true,
      previewDeploymentId: input.previewDeploymentId ?? null,
      uniqueConfigKey: await nextConfigKey(this.em),
      ...this.ownedBy(workload),
    });
    return this.cradle.domainService.view(await this.addRoute(row, workload));
  }

  /** One of the organization's domains (NOT_FOUND otherwise). */
  one(domainId: string): Promise<DomainRow> {
    return this.owned(Domain, { domainId }, 'Domain');
  }

  /** An application's domains, each with the application joined, as the peer's byApplicationId answers them. */
  async byApplication(applicationId: string): Promise<DomainWithApplication[]> {
    const { workload, rows } = await this.#byWorkload('applicationId', applicationId);
    return rows.map(r => this.cradle.domainService.withApplication(r, workload));
  }

  /** A compose stack's domains, each with the stack joined, as the peer's byComposeId answers them. */
  async byCompose(composeId: string): Promise<DomainWithCompose[]> {
    const { workload, rows } = await this.#byWorkload('composeId', composeId);
    return rows.map(r => this.cradle.domainService.withCompose(r, workload));
  }

  /** Changes a domain and routes the change. */
  async update(input: UpdateDomainInput): Promise<DomainView> {
    const row = await this.one(input.domainId);
    const fields = checkedDomain({
      host: input.host,
      path: input.path === undefined ? (row.path ?? '/') : (input.path ?? '/'),
      port: input.port === undefined ? (row.port ?? 3000) : (input.port ?? 3000),
      https: input.https ?? row.https,
      certificateType: input.certificateType ?? (row.certificateType as 'none'),
      customCertResolver: input.customCertResolver === undefined ? (row.customCertResolver ?? null) : input.customCertResolver,
      customEntrypoint: input.customEntrypoint === undefined ? (row.customEntrypoint ?? null) : input.customEntrypoint,
      serviceName: input.serviceName === undefined ? (row.serviceName ?? null) : input.serviceName,
      internalPath: input.internalPath === undefined ? (row.internalPath ?? '/') : (input.internalPath ?? '/'),
      stripPath: input.stripPath ?? row.stripPath,
      middlewares: input.middlewares === undefined ? (row.middlewares ?? null) : input.middlewares,
    });
    await assertHostFree(fields.host, fields.path, row.domainId, this.em);
    const kept = { ...(input.domainType === undefined ? {} : { domainType: input.domainType }), ...(input.enabled === undefined ? {} : { enabled: input.enabled }) };
    return this.cradle.domainService.view(await this.changeRoute(row, { ...fields, ...kept }));
  }

  /** Removes a domain and its route; answers it as it was. */
  async remove(domainId: string): Promise<DomainView> {
    return this.cradle.domainService.view(await this.changeRoute(await this.one(domainId), 'remove'));
  }

  /**
   * A domain of the organization that forward auth can guard, with its workload: one the proxy
   * routes from Berth's own routes, an application's (as the peer's) — a compose service's domain
   * (serviceName) may be routed by its stack's labels, which no check would stand in front of.
   */
  async guardable(domainId: string): Promise<{ row: DomainRow; workload: WorkloadRef }> {
    const row = await this.one(domainId);
    const workload = row.serviceName ? null : await this.cradle.workloads.kind(row.serviceType)?.find(row.serviceId, this.em);
    if (!workload) throw badRequest("domainId: forward auth guards an application's domains only (a compose service's domain is routed by its stack)");
    return { row, workload };
  }

  /** Switches forward auth of a domain on or off, and routes the change at once. */
  async setForwardAuth(row: DomainRow, on: boolean): Promise<DomainView> {
    return this.cradle.domainService.view(await this.changeRoute(row, { forwardAuthEnabled: on }));
  }

  /** The domains of a workload named by an id field (applicationId, composeId), with the workload; none when no kind with that id field takes domains. */
  async #byWorkload(idField: string, id: string): Promise<{ workload: WorkloadRef | null; rows: DomainRow[] }> {
    const kind = this.owners.kindByIdField(idField);
    if (!kind) return { workload: null, rows: [] };
    const workload = await this.cradle.workloads.owner(kind.kind, id, this.organizationId, this.em);
    return { workload, rows: await this.em.find(Domain, { serviceType: workload.kind, serviceId: workload.id }, { orderBy: { createdAt: 'asc' } }) };
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** domain.* for the current request's caller (request scope only). */
    domainRequests: DomainRequests;
  }
}
