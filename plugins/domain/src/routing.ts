// Hands the active proxy provider what a workload serves: its domains, redirects and basic-auth
// users, read from the tables and applied as a whole after every change, so the proxy never
// holds half of an edit. The proxy service itself is made (or updated) on first use. A workload
// on a server is routed by that server's proxy (the provider's forServer), on that server's engine.
// The proxy joins every organization's network of its engine (each organization's workloads are on
// their own): the network of a workload whose routes are applied is made first.
import { domainToASCII } from 'node:url';
import {
  badRequest,
  BerthError,
  setOrNull,
  unavailable,
  type Cradle,
  type EntityManager,
  type ProxyEngine,
  type ProxyForwardAuth,
  type ProxyProvider,
  type ProxyRoute,
  type ProxyWorkloadConfig,
} from '@berth/core';
import { ownerLabels, type WorkloadRef } from '@berth/plugin-workloads';
import { Domain, Redirect, Security, type DomainRow } from './entities.ts';

const order = { orderBy: { createdAt: 'asc' } } as const;

/** The owner of the proxy's engine objects: no record, no organization (it serves them all). */
const PROXY_OWNER = { kind: 'proxy', id: 'proxy', organizationId: '' };

/** A host in ASCII (punycode for an internationalised name); '' when it is not a host name. */
export function asciiHost(host: string): string {
  const ascii = domainToASCII(host.trim().toLowerCase());
  return /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?)*$/.test(ascii) ? ascii : '';
}

export class ProxyRouting {
  readonly #cradle: () => Cradle;
  readonly #servers = new Map<string, ProxyProvider>();

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
  }

  /** The active provider (of the server's proxy, for a serverId); null when the config says `proxy: none`. */
  provider(serverId: string | null = null): ProxyProvider | null {
    const { config, providers } = this.#cradle();
    if (config.proxy === 'none') return null;
    const provider = providers.get('proxy', config.proxy);
    if (serverId === null) return provider;
    let own = this.#servers.get(serverId);
    if (!own) {
      if (!provider.forServer)
        throw badRequest(`The active proxy provider "${provider.id}" runs only on this machine: a domain of a workload on server ${serverId} cannot be routed (config proxy, env BERTH_PROXY)`);
      const { hosts } = this.#cradle();
      own = provider.forServer({ serverId, run: async (argv, options) => (await hosts.of(serverId)).run(argv, options) });
      this.#servers.set(serverId, own);
    }
    return own;
  }

  /** The provider that serves the server's workloads; null when none can (no proxy, or one that runs only here). */
  servedBy(serverId: string | null): ProxyProvider | null {
    try {
      return this.provider(serverId);
    } catch {
      return null;
    }
  }

  /** The active provider, or a 400 naming it when an operation needs Traefik's files. */
  traefik(): ProxyProvider {
    const provider = this.provider();
    if (!provider?.traefikFiles)
      throw badRequest(`This operation reads and writes Traefik's configuration, and the active proxy provider is ${provider ? `"${provider.id}"` : 'none'} (config proxy, env BERTH_PROXY)`);
    return provider;
  }

  /** The engine the proxy of this machine, or of a server, runs on. */
  async engine(serverId: string | null = null): Promise<ProxyEngine> {
    const { hosts } = this.#cradle();
    const labels = ownerLabels(PROXY_OWNER);
    if (serverId === null) {
      const docker = await hosts.local();
      return { docker, network: hosts.platformNetwork, networks: await hosts.organizationNetworks(docker), labels };
    }
    const provideImage = async (image: string) => {
      if ((await hosts.provideImage(serverId, image)) === 'absent') throw new Error(`the image ${image} is neither on server ${serverId} nor on this machine to copy`);
    };
    const docker = await (await hosts.of(serverId)).engine();
    return { docker, network: hosts.platformNetwork, networks: await hosts.organizationNetworks(docker), labels, provideImage };
  }

  /**
   * Runs a step of the proxy's: a failure there (its image missing, its port taken, its config
   * refused) is not the request's fault, so it answers 503 with the proxy's reason, never a 500.
   * What was stored stays stored: every change applies the workload's whole route set again.
   */
  async apply<T>(what: string, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (e) {
      if (e instanceof BerthError) throw e;
      throw unavailable(
        `The proxy could not ${what}: ${(e as Error).message}. What was saved stays saved; the next change of these routes applies them all again, and domain.one's preflight shows the proxy's state`,
      );
    }
  }

  /** Makes sure the proxy (of this machine, or of the server) runs; answers the provider (null: no proxy). */
  async ensure(serverId: string | null = null): Promise<ProxyProvider | null> {
    const provider = this.provider(serverId);
    if (provider) await this.apply('start', async () => provider.ensure(await this.engine(serverId)));
    return provider;
  }

  /** What the workload serves, from the tables. */
  async configOf(workload: WorkloadRef, em: EntityManager): Promise<ProxyWorkloadConfig> {
    const where = { serviceType: workload.kind, serviceId: workload.id };
    const [domains, redirects, users] = await Promise.all([em.find(Domain, where, order), em.find(Redirect, where, order), em.find(Security, where, order)]);
    const secrets = this.#cradle().secrets;
    const kind = this.#cradle().workloads.kind(workload.kind);
    // A domain switched off (enabled false) keeps its record and makes no route.
    const routed = await Promise.all(
      domains
        .filter(d => d.enabled)
        .map(async d => {
          const route: ProxyRoute = routeOf(d);
          const upstream = route.serviceName && kind?.routeUpstream ? await kind.routeUpstream(workload, route.serviceName, route.port, em) : null;
          const full = upstream ? { ...route, upstream } : route;
          if (!d.forwardAuthEnabled) return full;
          // Fails closed: a domain whose check cannot be made (no forward-auth plugin, no auth domain for its server) is not served at all.
          const forwardAuth = this.#gate ? await this.#gate(workload, full, em) : null;
          return forwardAuth ? { ...full, forwardAuth } : null;
        }),
    );
    const routes = routed.filter(r => r !== null);
    return {
      appName: workload.appName,
      routes,
      redirects: redirects.map(r => ({ redirectId: r.redirectId, uniqueConfigKey: r.uniqueConfigKey, regex: r.regex, replacement: r.replacement, permanent: r.permanent })),
      basicAuth: users.map(u => ({ username: u.username, passwordHash: secrets.decrypt(u.passwordHashSealed) })),
    };
  }

  /** Applies the workload's routes to the proxy (nothing when there is no proxy). */
  async sync(workload: WorkloadRef, em: EntityManager): Promise<void> {
    const provider = this.provider(workload.serverId);
    if (!provider) return;
    // The workload's organization network exists before the proxy joins it (a domain may come before the first deploy).
    const { hosts } = this.#cradle();
    await hosts.ensureNetworkOf(await (await hosts.of(workload.serverId)).engine(), workload.organizationId);
    await this.ensure(workload.serverId);
    const config = await this.configOf(workload, em);
    await this.apply('apply the routes', () => (config.routes.length ? provider.applyWorkload(config) : provider.removeWorkload(workload.appName)));
  }

  /** Applies the routes of the workload a stored record belongs to (nothing when it is gone). */
  async syncOwnerOf(record: { serviceType: string; serviceId: string }, em: EntityManager): Promise<void> {
    const kind = this.#cradle().workloads.kind(record.serviceType);
    const workload = kind ? await kind.find(record.serviceId, em) : await this.#attachedOwners.get(record.serviceType)?.(record.serviceId, em);
    if (workload) await this.sync(workload, em);
  }

  /** How a domain with forward auth on is checked (the forward-auth plugin's); none: such a domain is not served. */
  #gate: ForwardAuthGate | undefined;

  /** Sets the forward-auth check of the domains that have it on (a seam the forward-auth plugin fills). */
  gateWith(gate: ForwardAuthGate): void {
    this.#gate = gate;
  }

  /** The owners of domains attached by other plugins (a preview's), by the kind they were attached under. */
  readonly #attachedOwners = new Map<string, (id: string, em: EntityManager) => Promise<WorkloadRef | null>>();

  ownsAttached(kind: string, find: (id: string, em: EntityManager) => Promise<WorkloadRef | null>): void {
    this.#attachedOwners.set(kind, find);
  }

  /** Takes the workload off the proxy (of its server). */
  async forget(appName: string, serverId: string | null = null): Promise<void> {
    // Ensured first: a process that has not used the proxy yet still has the running one drop the routes.
    const provider = await this.ensure(serverId);
    if (provider) await this.apply('remove the routes', () => provider.removeWorkload(appName));
  }
}

/** A stored domain as every proxy and compose file sees it: "" in the peer's nullable fields is not set (core/src/empty-strings.ts). */
export function routeOf(d: DomainRow) {
  return {
    domainId: d.domainId,
    uniqueConfigKey: d.uniqueConfigKey,
    host: asciiHost(d.host) || d.host,
    path: d.path || '/',
    internalPath: d.internalPath || '/',
    stripPath: d.stripPath,
    https: d.https,
    certificateType: d.certificateType as 'letsencrypt' | 'none' | 'custom',
    customCertResolver: setOrNull(d.customCertResolver),
    port: d.port ?? 3000,
    serviceName: setOrNull(d.serviceName),
    customEntrypoint: setOrNull(d.customEntrypoint),
    middlewares: d.middlewares ?? [],
  };
}

/** The check of a route with forward auth on, for the proxy (null: it cannot be made, and the route is not served). */
export type ForwardAuthGate = (workload: WorkloadRef, route: ProxyRoute, em: EntityManager) => Promise<ProxyForwardAuth | null>;

/** What server.setup asks of the proxy: that the server's runs (its provider's id), null with `proxy: none`; from the domain plugin. */
export interface ServerProxies {
  ensure(serverId: string): Promise<string | null>;
}

declare module '@berth/core' {
  interface Cradle {
    /** Starts the proxy of a server (server.setup's proxy step); from the domain plugin. */
    serverProxies: ServerProxies;
    /** The proxy of this machine or of a server, for routes that are no workload's domains (a self-hosted registry); from the domain plugin. */
    proxyRouting: ProxyRouting;
  }
}
