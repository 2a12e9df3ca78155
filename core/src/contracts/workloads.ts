// Workloads (applications, compose stacks, databases) live in environments. A plugin that
// owns a kind of workload registers a lister, so project and environment reads include it
// without knowing the plugin.
import type { EntityManager } from '@mikro-orm/postgresql';

/** The keys under which an environment lists its workloads, as the peer's API names them. */
export const workloadKeys = ['applications', 'compose', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis'] as const;
export type WorkloadKey = (typeof workloadKeys)[number];
export type EnvironmentWorkloads = Record<WorkloadKey, Record<string, unknown>[]>;

export interface WorkloadLister {
  /** Which list of the environment this lister fills. */
  readonly key: WorkloadKey;
  /** The workloads of the given environments, grouped by environmentId. */
  list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>>;
}

export class WorkloadRegistry {
  readonly #listers: WorkloadLister[] = [];
  register(lister: WorkloadLister): void {
    this.#listers.push(lister);
  }
  /** Every environment's workloads; keys without a lister are empty lists. */
  async collect(environmentIds: string[], em: EntityManager): Promise<Map<string, EnvironmentWorkloads>> {
    const out = new Map<string, EnvironmentWorkloads>();
    for (const id of environmentIds) out.set(id, Object.fromEntries(workloadKeys.map(k => [k, []])) as unknown as EnvironmentWorkloads);
    if (!environmentIds.length) return out;
    for (const lister of this.#listers) {
      const found = await lister.list(environmentIds, em);
      for (const [envId, items] of found) out.get(envId)?.[lister.key].push(...items);
    }
    return out;
  }
}
