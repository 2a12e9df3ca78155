// Domains as the rest of Berth sees them: a domain's view (its owning workload joined), a domain
// of a service that is not a workload of the registry (a preview's), generated hosts, and the
// checks every domain passes. domain.* is domain-requests.ts; deleting a workload drops its domains
// and its routes (directory.ts, called by the workload kit).
import { randomBytes } from 'node:crypto';
import { conflict, invalidField, type EntityManager } from '@berth/core';
import type { AttachedDomain, WorkloadRef } from '@berth/plugin-workloads';
import { Domain, type DomainRow } from './entities.ts';
import { asciiHost } from './routing.ts';
import type { DomainView, DomainWithApplication, DomainWithCompose, UpdateDomainInput } from './schemas.ts';
import { ProxyBound } from './proxy-bound.ts';

/** The next value of the proxy's name sequence (routers, middlewares). */
export async function nextConfigKey(em: EntityManager): Promise<number> {
  const [row] = await em.getConnection().execute<{ key: string }[]>(`select nextval('proxy_config_key_seq') as key`);
  return Number(row!.key);
}

const OWNER_FIELDS = ['applicationId', 'composeId'];

type Editable = Omit<UpdateDomainInput, 'domainId'>;

/** A domain's routed fields, checked (a 400 naming the field), its host trimmed. */
export function checkedDomain<T extends Required<Pick<Editable, 'host'>> & { path: string; internalPath: string; certificateType: string; customCertResolver: string | null; https: boolean }>(
  f: T,
): T {
  if (!asciiHost(f.host)) throw invalidField('host', `"${f.host}" is not a host name`);
  if (/\s|\.\./.test(f.path)) throw invalidField('path', 'no spaces or ".." segments');
  if (/\s|\.\./.test(f.internalPath)) throw invalidField('internalPath', 'no spaces or ".." segments');
  // A certificate type while https is off is stored and ignored, as the peer's: every proxy reads it only for https routes.
  return { ...f, host: f.host.trim() };
}

/** One workload per host and path, whichever organization holds it. */
export async function assertHostFree(host: string, path: string, self: string | null, em: EntityManager): Promise<void> {
  const ascii = asciiHost(host);
  const same = await em.find(Domain, { path });
  const clash = same.find(d => d.domainId !== self && asciiHost(d.host) === ascii);
  if (clash) throw conflict(`host ${host} with path ${path} is already routed by another domain`);
}

/** Registered as `domainService`; domain.* is the request-scoped `domainRequests`. */
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
      enabled: row.enabled,
      forwardAuthEnabled: row.forwardAuthEnabled,
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

  /** A domain by its id, whichever organization holds it (forward auth's check names it); null when there is none. */
  find(domainId: string, em: EntityManager): Promise<DomainRow | null> {
    return em.findOne(Domain, { domainId });
  }

  /** The domains with forward auth on, of every organization (routed again when an auth domain changes). */
  withForwardAuth(em: EntityManager): Promise<DomainRow[]> {
    return em.find(Domain, { forwardAuthEnabled: true }, { orderBy: { createdAt: 'asc' } });
  }

  /** A domain of a service that is not a workload of the registry (a preview's), checked and routed as any other. */
  async attach(owner: WorkloadRef, domain: AttachedDomain, em: EntityManager): Promise<DomainRow> {
    const { domainType, previewDeploymentId, ...route } = domain;
    const fields = checkedDomain({ ...route, internalPath: '/', stripPath: false, customEntrypoint: null, serviceName: null, middlewares: null });
    await assertHostFree(fields.host, fields.path, null, em);
    const row = em.create(Domain, {
      ...fields,
      domainType,
      previewDeploymentId,
      enabled: true,
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
}

declare module '@berth/core' {
  interface Cradle {
    /** Domains as the rest of Berth sees them (views, attached domains, generated hosts); from the domain plugin. */
    domainService: DomainService;
  }
}
