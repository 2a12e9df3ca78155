// What every workload kind's records service does the same way: where a new record goes (the
// current variant's environmentId, or the older variant's project → its default environment) and
// what it is called, its refresh token, the peer's search filters, the lookups the registry asks
// of a kind, its list for environments and its status setter.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { containing, invalidField, type EnvironmentDirectory, type Grants, type EnvironmentRef } from '@berth/core';
import type { WorkloadRef } from './registry.ts';
import type { AssertAppNameFree } from './changes.ts';
import { generateAppName } from './naming.ts';

/** A new webhook refresh token (the secret part of a kind's push URL). */
export const newRefreshToken = (): string => randomBytes(24).toString('base64url');

/** The environment a new record goes in; 400 naming environmentId when neither is given. */
export function placementFor(environments: EnvironmentDirectory, input: { environmentId?: string; projectId?: string }, organizationId: string, em: EntityManager): Promise<EnvironmentRef> {
  if (input.environmentId) return environments.get(input.environmentId, organizationId, em);
  if (input.projectId) return environments.defaultOf(input.projectId, organizationId, em);
  throw invalidField('environmentId', 'is required (or projectId, in the older API)');
}

/** Where a new record goes and what it is called: its environment (placementFor), its host and its appName (given, or made from its name), free on that host. */
export async function newRecordColumns(
  input: { name: string; appName?: string; description?: string | null; environmentId?: string; projectId?: string; serverId?: string | null },
  ctx: { environments: EnvironmentDirectory; organizationId: string; em: EntityManager; assertAppNameFree: AssertAppNameFree },
) {
  const environment = await placementFor(ctx.environments, input, ctx.organizationId, ctx.em);
  // A serverId is checked by the caller (WorkloadRegistry.assertServer): a server of the organization.
  const serverId = input.serverId ?? null;
  const appName = input.appName ?? generateAppName(input.name);
  await ctx.assertAppNameFree(appName, serverId, ctx.em);
  return { name: input.name, appName, description: input.description ?? null, environmentId: environment.environmentId, organizationId: ctx.organizationId, serverId };
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
export async function searchFilters(input: SearchFields, organizationId: string, em: EntityManager, given?: { field: string; grants: Grants }): Promise<object[]> {
  const and: object[] = [{ organizationId }];
  // A member given services one by one finds only those (the peer's narrowing of its searches).
  const services = given?.grants.records?.services;
  if (given && services) and.push({ [given.field]: { $in: [...services] } });
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

/** What every kind's record has (workloadColumns, and its creation time). */
export interface WorkloadRecord {
  name: string;
  appName: string;
  environmentId: string;
  organizationId: string;
  serverId?: string | null;
  createdAt: Date;
}

/** The EntityManager's calls on a kind's rows, as recordLookups makes them. */
interface RowsOf<Row> {
  findOne(entity: unknown, where: object): Promise<Row | null>;
  find(entity: unknown, where: object, options?: object): Promise<Row[]>;
  nativeUpdate(entity: unknown, where: object, data: object): Promise<number>;
}

/** The registry's lookups of the kind `kind` whose rows are `entity`, keyed by `idField` (its status in `statusField`), its records as environment and project reads list them, and its status setter. */
export function recordLookups<Row extends WorkloadRecord>(entity: unknown, idField: string, kind: string, statusField: string) {
  // cast: the entity is a kind's, known at run time; Row is what its plugin declares it holds.
  const rows = (em: EntityManager) => em as unknown as RowsOf<Row>;
  const ref = (row: Row): WorkloadRef => ({
    kind,
    id: String((row as Record<string, unknown>)[idField]),
    organizationId: row.organizationId,
    environmentId: row.environmentId,
    appName: row.appName,
    name: row.name,
    serverId: row.serverId ?? null,
  });
  return {
    /** The record as the registry names it. */
    ref,
    async findRef(id: string, em: EntityManager): Promise<WorkloadRef | null> {
      const row = await rows(em).findOne(entity, { [idField]: id });
      return row ? ref(row) : null;
    },
    async findByAppName(appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null> {
      const row = await rows(em).findOne(entity, { appName, serverId });
      return row ? ref(row) : null;
    },
    async inEnvironments(environmentIds: string[], em: EntityManager): Promise<WorkloadRef[]> {
      return (await rows(em).find(entity, { environmentId: { $in: environmentIds } })).map(ref);
    },
    /** Stores the record's status (running, done, idle, error). */
    async setStatus(id: string, status: string, em: EntityManager): Promise<void> {
      await rows(em).nativeUpdate(entity, { [idField]: id }, { [statusField]: status });
    },
    /** The records of the environments, oldest first, by environment, each as `item` answers it (lists carry no secrets). */
    async list(environmentIds: string[], em: EntityManager, item: (row: Row) => Record<string, unknown>): Promise<Map<string, Record<string, unknown>[]>> {
      const out = new Map<string, Record<string, unknown>[]>();
      for (const row of await rows(em).find(entity, { environmentId: { $in: environmentIds } }, { orderBy: { createdAt: 'asc', [idField]: 'asc' } })) {
        if (!out.has(row.environmentId)) out.set(row.environmentId, []);
        out.get(row.environmentId)!.push(item(row));
      }
      return out;
    },
  };
}
