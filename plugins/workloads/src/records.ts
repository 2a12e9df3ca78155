// What every workload kind's records service does the same way: where a new record goes (the
// current variant's environmentId, or the older variant's project → its default environment),
// the peer's search filters, and the lookups the registry asks of a kind.
import type { EntityManager } from '@mikro-orm/postgresql';
import { containing, invalidField, type EnvironmentDirectory, type EnvironmentRef } from '@berth/core';
import type { WorkloadRef } from './registry.ts';

/** The environment a new record goes in; 400 naming environmentId when neither is given. */
export function placementFor(environments: EnvironmentDirectory, input: { environmentId?: string; projectId?: string }, organizationId: string, em: EntityManager): Promise<EnvironmentRef> {
  if (input.environmentId) return environments.get(input.environmentId, organizationId, em);
  if (input.projectId) return environments.defaultOf(input.projectId, organizationId, em);
  throw invalidField('environmentId', 'is required (or projectId, in the older API)');
}

export interface SearchFields {
  q?: string;
  name?: string;
  appName?: string;
  description?: string;
  environmentId?: string;
  projectId?: string;
}

/** The conditions of a kind's search, as the peer's: q in name, appName or description, each of those, the environment or the project's environments — within the organization. */
export async function searchFilters(input: SearchFields, organizationId: string, em: EntityManager): Promise<object[]> {
  const and: object[] = [{ organizationId }];
  const q = input.q?.trim();
  if (q) and.push({ $or: ['name', 'appName', 'description'].map(f => ({ [f]: { $ilike: containing(q) } })) });
  for (const f of ['name', 'appName', 'description'] as const) {
    const v = input[f]?.trim();
    if (v) and.push({ [f]: { $ilike: containing(v) } });
  }
  if (input.environmentId) and.push({ environmentId: input.environmentId });
  if (input.projectId) {
    const environments = await em.execute<{ environment_id: string }[]>('select environment_id from environments where project_id = ? and organization_id = ?', [input.projectId, organizationId]);
    and.push({ environmentId: { $in: environments.map(e => e.environment_id) } });
  }
  return and;
}

/** The registry's lookups of a kind whose rows are `entity`, keyed by `idField`. */
export function recordLookups<Row>(entity: unknown, idField: string, ref: (row: Row) => WorkloadRef) {
  // casts: the entity is a kind's, known at run time; Row is what its plugin declares it holds.
  const find = (where: object, em: EntityManager) => em.findOne(entity as never, where as never) as Promise<Row | null>;
  return {
    async findRef(id: string, em: EntityManager): Promise<WorkloadRef | null> {
      const row = await find({ [idField]: id }, em);
      return row ? ref(row) : null;
    },
    async findByAppName(appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null> {
      const row = await find({ appName, serverId }, em);
      return row ? ref(row) : null;
    },
    async inEnvironments(environmentIds: string[], em: EntityManager): Promise<WorkloadRef[]> {
      return ((await em.find(entity as never, { environmentId: { $in: environmentIds } } as never)) as Row[]).map(ref); // casts: as above
    },
  };
}
