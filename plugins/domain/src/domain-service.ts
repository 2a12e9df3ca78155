// domain.*: domains of the caller's organization's workloads. Every change is applied to the
// proxy at once (no redeploy of the workload); deleting a workload drops its domains and its
// routes (directory.ts, called by the workload kit).
import { randomBytes } from 'node:crypto';
import { conflict, invalidField, notFound, type Cradle, type EntityManager } from '@berth/core';
import type { AttachedDomain, WorkloadRef } from '@berth/plugin-workloads';
import { Domain, type DomainRow } from './entities.ts';
import { asciiHost } from './routing.ts';
import type { CreateDomainInput, DomainView, DomainWithApplication, DomainWithCompose, UpdateDomainInput } from './schemas.ts';
import { ProxyBound } from './proxy-bound.ts';

/** The next value of the proxy's name sequence (routers, middlewares). */
export async function nextConfigKey(em: EntityManager): Promise<number> {
  const [row] = await em.getConnection().execute<{ key: string }[]>(`select nextval('proxy_config_key_seq') as key`);
  return Number(row!.key);
}

const OWNER_FIELDS = ['applicationId', 'composeId'];

type Editable = Omit<UpdateDomainInput, 'domainId'>;

export class DomainService extends ProxyBound {
  view(row: DomainRow): DomainView {
    return {
      domainId: row.domainId,
      host: row.host,
      https: row.https,
      port: row.port ?? null,
      path: row.path ?? null,
      serviceName: row.serviceName ?? null,
      domainType: (row.domainType ?? null) as DomainView['domainType'],
      uniqueConfigKey: row.uniqueConfigKey,
      createdAt: row.createdAt.toISOString(),
      ...(this.owners.idFields(row.serviceType, row.serviceId, OWNER_FIELDS) as { applicationId: string | null; composeId: string | null }),
      customCertResolver: row.customCertResolver ?? null,
      previewDeploymentId: row.previewDeploymentId ?? null,
      certificateType: row.certificateType as DomainView['certificateType'],
      internalPath: row.internalPath ?? null,
      stripPath: row.stripPath,
      customEntrypoint: row.customEntrypoint ?? null,
      middlewares: row.middlewares ?? null,
      enabled: true,
      forwardAuthEnabled: false,
    };
  }

  /** A domain as the peer's reads answer it: with its owning application joined. */
  withApplication(row: DomainRow, workload: WorkloadRef | null): DomainWithApplication {
    return { ...this.view(row), application: this.owners.application(workload) };
  }

  /** A domain as the peer's byComposeId answers it: with its owning compose stack joined. */
  withCompose(row: DomainRow, workload: WorkloadRef | null): DomainWithCompose {
    return { ...this.view(row), compose: this.owners.compose(workload) };
  }

  async create(input: CreateDomainInput, organizationId: string, em: EntityManager): Promise<DomainRow> {
    const workload = await this.owners.fromInput(input, organizationId, em);
    const fields = this.#checked({
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
    await this.#assertHostFree(fields.host, fields.path, null, em);
    const row = em.create(Domain, {
      ...fields,
      domainType: input.domainType ?? workload.kind,
      previewDeploymentId: input.previewDeploymentId ?? null,
      uniqueConfigKey: await nextConfigKey(em),
      serviceType: workload.kind,
      serviceId: workload.id,
      organizationId,
      createdAt: new Date(),
    });
    await em.flush();
    await this.routing.sync(workload, em);
    return row;
  }

  /** A domain of a service that is not a workload of the registry (a preview's), checked and routed as any other. */
  async attach(owner: WorkloadRef, domain: AttachedDomain, em: EntityManager): Promise<DomainRow> {
    const { domainType, previewDeploymentId, ...route } = domain;
    const fields = this.#checked({ ...route, internalPath: '/', stripPath: false, customEntrypoint: null, serviceName: null, middlewares: null });
    await this.#assertHostFree(fields.host, fields.path, null, em);
    const row = em.create(Domain, {
      ...fields,
      domainType,
      previewDeploymentId,
      uniqueConfigKey: await nextConfigKey(em),
      serviceType: owner.kind,
      serviceId: owner.id,
      organizationId: owner.organizationId,
      createdAt: new Date(),
    });
    await em.flush();
    await this.routing.sync(owner, em);
    return row;
  }

  async one(domainId: string, organizationId: string, em: EntityManager): Promise<DomainRow> {
    const row = await em.findOne(Domain, { domainId, organizationId });
    if (!row) throw notFound('Domain');
    return row;
  }

  /** The domains of a workload named by an id field (applicationId, composeId), with the workload; none when no kind with that id field takes domains. */
  async byWorkload(idField: string, id: string, organizationId: string, em: EntityManager): Promise<{ workload: WorkloadRef | null; rows: DomainRow[] }> {
    const kind = this.owners.kindByIdField(idField);
    if (!kind) return { workload: null, rows: [] };
    const workload = await this.cradle().workloads.owner(kind.kind, id, organizationId, em);
    return { workload, rows: await em.find(Domain, { serviceType: workload.kind, serviceId: workload.id }, { orderBy: { createdAt: 'asc' } }) };
  }

  async update(input: UpdateDomainInput, organizationId: string, em: EntityManager): Promise<DomainRow> {
    const row = await this.one(input.domainId, organizationId, em);
    const fields = this.#checked({
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
    await this.#assertHostFree(fields.host, fields.path, row.domainId, em);
    Object.assign(row, fields, input.domainType === undefined ? {} : { domainType: input.domainType });
    await em.flush();
    await this.routing.syncOwnerOf(row, em);
    return row;
  }

  async remove(domainId: string, organizationId: string, em: EntityManager): Promise<DomainRow> {
    const row = await this.one(domainId, organizationId, em);
    await em.remove(row).flush();
    await this.routing.syncOwnerOf(row, em);
    return row;
  }

  /** A wildcard-DNS host for the server's address: <appName>-<random>-<ip with dashes>.<base>. */
  generate(appName: string): string {
    const { serverIp, generatedDomainBase } = this.cradle().config;
    const ip = (serverIp ?? '127.0.0.1').replace(/[.:]/g, '-');
    return `${appName.toLowerCase()}-${randomBytes(3).toString('hex')}-${ip}.${generatedDomainBase}`;
  }

  /** Generated domains point at the server's address: its address ('' while none is configured), as the peer answers. */
  generationAddress(): string {
    return this.cradle().config.serverIp ?? '';
  }

  // ------------------------------------------------------------ internals
  #checked<T extends Required<Pick<Editable, 'host'>> & { path: string; internalPath: string; certificateType: string; customCertResolver: string | null; https: boolean }>(f: T): T {
    if (!asciiHost(f.host)) throw invalidField('host', `"${f.host}" is not a host name`);
    if (/\s|\.\./.test(f.path)) throw invalidField('path', 'no spaces or ".." segments');
    if (/\s|\.\./.test(f.internalPath)) throw invalidField('internalPath', 'no spaces or ".." segments');
    if (f.certificateType !== 'none' && !f.https) throw invalidField('certificateType', `a ${f.certificateType} certificate needs https: true`);
    return { ...f, host: f.host.trim() };
  }

  /** One workload per host and path, whichever organization holds it. */
  async #assertHostFree(host: string, path: string, self: string | null, em: EntityManager): Promise<void> {
    const ascii = asciiHost(host);
    const same = await em.find(Domain, { path });
    const clash = same.find(d => d.domainId !== self && asciiHost(d.host) === ascii);
    if (clash) throw conflict(`host ${host} with path ${path} is already routed by another domain`);
  }
}

/** domain.* for one request: confined to the caller's organization and the request's unit of work. */
export const callerDomains =
  (domains: DomainService) =>
  ({ principal, em }: Cradle) => {
    const organizationId = principal!.organizationId;
    return {
      create: async (input: CreateDomainInput) => domains.view(await domains.create(input, organizationId, em)),
      one: (domainId: string) => domains.one(domainId, organizationId, em),
      /** An application's domains, each with the application joined, as the peer's byApplicationId answers them. */
      byApplication: async (applicationId: string) => {
        const { workload, rows } = await domains.byWorkload('applicationId', applicationId, organizationId, em);
        return rows.map(r => domains.withApplication(r, workload));
      },
      /** A compose stack's domains, each with the stack joined, as the peer's byComposeId answers them. */
      byCompose: async (composeId: string) => {
        const { workload, rows } = await domains.byWorkload('composeId', composeId, organizationId, em);
        return rows.map(r => domains.withCompose(r, workload));
      },
      update: async (input: UpdateDomainInput) => domains.view(await domains.update(input, organizationId, em)),
      remove: async (domainId: string) => domains.view(await domains.remove(domainId, organizationId, em)),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    /** domain.* for the current request's caller (request scope only). */
    callerDomains: ReturnType<ReturnType<typeof callerDomains>>;
  }
}
