// Workloads (applications, compose stacks, databases) live in environments. A plugin that
// owns a kind of workload registers a lister, so project and environment reads include it
// without knowing the plugin.
import type { EntityManager } from '@mikro-orm/postgresql';
import { notFound } from '@berth/core';

/** The keys under which an environment lists its workloads, as the peer's API names them. */
export const workloadKeys = ['applications', 'compose', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis'] as const;
export type WorkloadKey = (typeof workloadKeys)[number];
/** The built-in lists, plus one per kind a third-party plugin adds (e.g. a database kind). */
export type EnvironmentWorkloads = Record<WorkloadKey, Record<string, unknown>[]> & Record<string, Record<string, unknown>[]>;

export interface WorkloadLister {
  /** Which list of the environment this lister fills: a built-in key, or a third-party kind's own. */
  readonly key: WorkloadKey | (string & {});
  /** The workloads of the given environments, grouped by environmentId. */
  list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>>;
}

/** One workload, as other plugins need to see it (mounts, ports, domains, deployments). */
export interface WorkloadRef {
  /** application, compose, postgres, mysql, mariadb, mongo, redis... */
  kind: string;
  id: string;
  organizationId: string;
  environmentId: string;
  /** The Swarm service name. */
  appName: string;
  serverId: string | null;
}

/** Finds workloads of one kind; registered by the plugin that owns the kind. */
export interface WorkloadResolver {
  readonly kind: string;
  find(id: string, em: EntityManager): Promise<WorkloadRef | null>;
  /** Workloads of this kind already named appName on the host (serverId null = local). */
  findByAppName(appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null>;
}

export class WorkloadRegistry {
  readonly #listers: WorkloadLister[] = [];
  readonly #resolvers = new Map<string, WorkloadResolver>();
  register(lister: WorkloadLister): void {
    this.#listers.push(lister);
  }
  addResolver(resolver: WorkloadResolver): void {
    this.#resolvers.set(resolver.kind, resolver);
  }
  /** The workload if it exists in the organization; NOT_FOUND otherwise (also for a kind nobody serves). */
  async owner(kind: string, id: string, organizationId: string, em: EntityManager): Promise<WorkloadRef> {
    const found = await this.#resolvers.get(kind)?.find(id, em);
    if (!found || found.organizationId !== organizationId) throw notFound(kind.charAt(0).toUpperCase() + kind.slice(1));
    return found;
  }
  /** Whichever workload of any kind holds appName on the host, so service names never collide. */
  async byAppName(appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null> {
    for (const r of this.#resolvers.values()) {
      const found = await r.findByAppName(appName, serverId, em);
      if (found) return found;
    }
    return null;
  }
  /** Empty lists under every key: the built-in ones and those of registered listers. */
  empty(): EnvironmentWorkloads {
    const keys = new Set<string>([...workloadKeys, ...this.#listers.map(l => l.key)]);
    return Object.fromEntries([...keys].map(k => [k, []])) as unknown as EnvironmentWorkloads;
  }
  /** Every environment's workloads; keys without a lister are empty lists. */
  async collect(environmentIds: string[], em: EntityManager): Promise<Map<string, EnvironmentWorkloads>> {
    const out = new Map<string, EnvironmentWorkloads>();
    for (const id of environmentIds) out.set(id, this.empty());
    if (!environmentIds.length) return out;
    for (const lister of this.#listers) {
      const found = await lister.list(environmentIds, em);
      for (const [envId, items] of found) out.get(envId)?.[lister.key]?.push(...items);
    }
    return out;
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** The registry of workload kinds; from the workloads plugin. */
    workloads: WorkloadRegistry;
  }
}
