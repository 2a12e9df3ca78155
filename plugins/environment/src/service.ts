// Environments as other plugins use them (the EnvironmentDirectory, to place workloads), and what
// environment.* (requests.ts) shares with it: the rows as stored and read. A record of another
// organization is NOT_FOUND, never FORBIDDEN.
import { environmentView, iso, newId, notFound, type EntityManager, type EnvironmentDirectory, type EnvironmentRef, type Placement, type SecretBox, findOwned } from '@berth/core';
import { Environment, type EnvironmentRow } from './entities.ts';
import type { EnvironmentFields, EnvironmentView } from './schemas.ts';
import type { WorkloadRegistry } from '@berth/plugin-workloads';

const DEFAULT_ENVIRONMENT = 'production';

const toRef = (e: EnvironmentRow): EnvironmentRef => ({ environmentId: e.environmentId, projectId: e.projectId, organizationId: e.organizationId, name: e.name, isDefault: e.isDefault });
/** An environments row as SQL answers it; lists are read without the ORM's entity hydration, which costs ten times the query. */
export interface EnvironmentRecord {
  environment_id: string;
  name: string;
  description: string | null;
  env: string;
  is_default: boolean;
  project_id: string;
  created_at: Date;
}
export const selectList = 'select environment_id, name, description, env, is_default, project_id, created_at from environments';

/** The project's default environment first, then the others in the order they were made. */
const listOrder = { isDefault: 'desc', createdAt: 'asc', environmentId: 'asc' } as const;
export const listOrderSql = 'order by is_default desc, created_at, environment_id';

/** An environment read by SQL, its env opened. */
export const fromRecord = (r: EnvironmentRecord, secrets: SecretBox): EnvironmentFields => ({
  environmentId: r.environment_id,
  name: r.name,
  description: r.description,
  env: secrets.openText(r.env),
  projectId: r.project_id,
  isDefault: r.is_default,
  createdAt: iso(r.created_at)!,
});

/** A new row; `env` as stored (sealed), e.g. copied from another row. */
export function newEnvironment(em: EntityManager, e: { projectId: string; organizationId: string; name: string; description?: string | null; env?: string; isDefault?: boolean }): EnvironmentRow {
  // The id is set now, not on flush, so callers can refer to it in the same unit of work.
  return em.create(Environment, {
    environmentId: newId(),
    name: e.name,
    description: e.description ?? null,
    env: e.env ?? '',
    isDefault: e.isDefault ?? false,
    projectId: e.projectId,
    organizationId: e.organizationId,
    createdAt: new Date(),
  });
}

/** The environments with their workloads: one list per registered kind. */
export async function withWorkloads(environments: EnvironmentFields[], workloads: WorkloadRegistry, em: EntityManager): Promise<EnvironmentView[]> {
  const lists = await workloads.collect(
    environments.map(e => e.environmentId),
    em,
  );
  return environments.map(e => ({ ...e, ...(lists.get(e.environmentId) ?? workloads.empty()) }));
}

/** An environment's env may hold secrets: sealed at rest (SecretBox), opened only to answer and to deploy. */
export class EnvironmentService implements EnvironmentDirectory {
  readonly #workloads: WorkloadRegistry;
  readonly #secrets: () => SecretBox;

  constructor(workloads: WorkloadRegistry, secrets: () => SecretBox) {
    this.#workloads = workloads;
    this.#secrets = secrets;
  }

  readonly #fromRecord = (r: EnvironmentRecord): EnvironmentFields => fromRecord(r, this.#secrets());

  /** Seals the env of rows written before it was sealed (run at start; a no-op once done). */
  async sealStoredEnv(em: EntityManager): Promise<number> {
    const rows = await em.execute<{ environment_id: string; env: string }[]>("select environment_id, env from environments where env <> '' and env not like 'v1:%'");
    for (const r of rows) await em.execute('update environments set env = ? where environment_id = ? and env = ?', [this.#secrets().sealText(r.env), r.environment_id, r.env]);
    return rows.length;
  }

  // ------------------------------------------------------------ EnvironmentDirectory
  viewSchema(): ReturnType<typeof environmentView> {
    return environmentView(this.#workloads.listSchemas());
  }

  async removeWorkloadsOf(projectId: string, organizationId: string, em: EntityManager): Promise<void> {
    const rows = await em.find(Environment, { projectId, organizationId }, { fields: ['environmentId'] });
    await this.#workloads.removeIn(
      rows.map(r => r.environmentId),
      em,
    );
  }

  /** Removes the workloads of every environment of the organization through their kinds (before the organization is deleted). */
  async removeWorkloadsOfOrganization(organizationId: string, em: EntityManager): Promise<void> {
    const rows = await em.find(Environment, { organizationId }, { fields: ['environmentId'] });
    await this.#workloads.removeIn(
      rows.map(r => r.environmentId),
      em,
    );
  }

  async get(environmentId: string, organizationId: string, em: EntityManager): Promise<EnvironmentRef> {
    return toRef(await this.#find(environmentId, organizationId, em));
  }

  async defaultOf(projectId: string, organizationId: string, em: EntityManager): Promise<EnvironmentRef> {
    return toRef(await findOwned(em, Environment, { projectId, isDefault: true }, organizationId, 'Project'));
  }

  async placement(environmentId: string, organizationId: string, em: EntityManager): Promise<Placement> {
    const [row] = await em.execute<(EnvironmentRecord & { p_name: string; p_description: string | null; p_env: string; p_created_at: Date })[]>(
      `select e.environment_id, e.name, e.description, e.env, e.is_default, e.project_id, e.created_at,
              p.name as p_name, p.description as p_description, p.env as p_env, p.created_at as p_created_at
         from environments e join projects p on p.project_id = e.project_id where e.environment_id = ? and e.organization_id = ?`,
      [environmentId, organizationId],
    );
    if (!row) throw notFound('Environment');
    return { ...this.#fromRecord(row), project: { projectId: row.project_id, name: row.p_name, description: row.p_description, env: row.p_env, organizationId, createdAt: iso(row.p_created_at)! } };
  }

  async variables(environmentId: string, organizationId: string, em: EntityManager): Promise<{ project: string; environment: string }> {
    const [row] = await em.execute<{ project_env: string; environment_env: string }[]>(
      'select p.env as project_env, e.env as environment_env from environments e join projects p on p.project_id = e.project_id where e.environment_id = ? and e.organization_id = ?',
      [environmentId, organizationId],
    );
    if (!row) throw notFound('Environment');
    return { project: this.#secrets().openText(row.project_env), environment: this.#secrets().openText(row.environment_env) };
  }

  createDefault(projectId: string, organizationId: string, em: EntityManager): EnvironmentRef {
    return toRef(newEnvironment(em, { projectId, organizationId, name: DEFAULT_ENVIRONMENT, isDefault: true }));
  }

  async listForProjects(projectIds: string[], organizationId: string, em: EntityManager): Promise<Map<string, Record<string, unknown>[]>> {
    const out = new Map<string, EnvironmentView[]>(projectIds.map(id => [id, []]));
    if (!projectIds.length) return out;
    const rows = await em.execute<EnvironmentRecord[]>(`${selectList} where project_id in (?) and organization_id = ? ${listOrderSql}`, [projectIds, organizationId]);
    for (const view of await withWorkloads(rows.map(this.#fromRecord), this.#workloads, em)) out.get(view.projectId)?.push(view);
    return out;
  }

  async copyEnvironments(fromProjectId: string, toProjectId: string, organizationId: string, em: EntityManager): Promise<void> {
    const rows = await em.find(Environment, { projectId: fromProjectId, organizationId }, { orderBy: listOrder });
    // Every project has its default environment: none at all means the project is not the caller's.
    if (!rows.length) throw notFound('Project');
    for (const e of rows) {
      newEnvironment(em, { projectId: toProjectId, organizationId, name: e.name, description: e.description, env: e.env, isDefault: e.isDefault });
    }
  }

  // ------------------------------------------------------------ helpers
  #find(environmentId: string, organizationId: string, em: EntityManager): Promise<EnvironmentRow> {
    return findOwned(em, Environment, { environmentId }, organizationId, 'Environment');
  }
}
