// Environments of the organization's projects, and the EnvironmentDirectory other plugins
// use to place workloads. A record of another organization is NOT_FOUND, never FORBIDDEN.
import {
  badRequest,
  conflict,
  environmentView,
  iso,
  newId,
  notFound,
  textSearchClauses,
  type Cradle,
  type EntityManager,
  type TSchema,
  type EnvironmentDirectory,
  type EnvironmentRef,
  type Placement,
  type ProjectDirectory,
  type ProjectFields,
  type SecretBox,
} from '@berth/core';
import { Environment, type EnvironmentRow } from './entities.ts';
import type { CreateInput, DuplicateInput, EnvironmentFields, EnvironmentView, SearchInput, SearchResult, UpdateInput } from './schemas.ts';
import type { WorkloadRegistry } from '@berth/plugin-workloads';

const DEFAULT_ENVIRONMENT = 'production';

const toRef = (e: EnvironmentRow): EnvironmentRef => ({ environmentId: e.environmentId, projectId: e.projectId, organizationId: e.organizationId, name: e.name, isDefault: e.isDefault });
/** An environments row as SQL answers it; lists are read without the ORM's entity hydration, which costs ten times the query. */
interface EnvironmentRecord {
  environment_id: string;
  name: string;
  description: string | null;
  env: string;
  is_default: boolean;
  project_id: string;
  created_at: Date;
}
const selectList = 'select environment_id, name, description, env, is_default, project_id, created_at from environments';

/** The project's default environment first, then the others in the order they were made. */
const listOrder = { isDefault: 'desc', createdAt: 'asc', environmentId: 'asc' } as const;
const listOrderSql = 'order by is_default desc, created_at, environment_id';

/** An environment's env may hold secrets: sealed at rest (SecretBox), opened only to answer and to deploy. */
export class EnvironmentService implements EnvironmentDirectory {
  readonly #workloads: WorkloadRegistry;
  readonly #secrets: () => SecretBox;

  constructor(workloads: WorkloadRegistry, secrets: () => SecretBox) {
    this.#workloads = workloads;
    this.#secrets = secrets;
  }

  readonly #toFields = (e: EnvironmentRow): EnvironmentFields => ({
    environmentId: e.environmentId,
    name: e.name,
    description: e.description ?? null,
    env: this.#secrets().openText(e.env),
    projectId: e.projectId,
    isDefault: e.isDefault,
    createdAt: iso(e.createdAt)!,
  });

  readonly #fromRecord = (r: EnvironmentRecord): EnvironmentFields => ({
    environmentId: r.environment_id,
    name: r.name,
    description: r.description,
    env: this.#secrets().openText(r.env),
    projectId: r.project_id,
    isDefault: r.is_default,
    createdAt: iso(r.created_at)!,
  });

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
    const found = await em.findOne(Environment, { projectId, organizationId, isDefault: true });
    if (!found) throw notFound('Project');
    return toRef(found);
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
    return toRef(this.#new(em, { projectId, organizationId, name: DEFAULT_ENVIRONMENT, isDefault: true }));
  }

  async listForProjects(projectIds: string[], organizationId: string, em: EntityManager): Promise<Map<string, Record<string, unknown>[]>> {
    const out = new Map<string, EnvironmentView[]>(projectIds.map(id => [id, []]));
    if (!projectIds.length) return out;
    const rows = await em.execute<EnvironmentRecord[]>(`${selectList} where project_id in (?) and organization_id = ? ${listOrderSql}`, [projectIds, organizationId]);
    for (const view of await this.#views(rows.map(this.#fromRecord), em)) out.get(view.projectId)?.push(view);
    return out;
  }

  async copyEnvironments(fromProjectId: string, toProjectId: string, organizationId: string, em: EntityManager): Promise<void> {
    const rows = await em.find(Environment, { projectId: fromProjectId, organizationId }, { orderBy: listOrder });
    // Every project has its default environment: none at all means the project is not the caller's.
    if (!rows.length) throw notFound('Project');
    for (const e of rows) {
      this.#new(em, { projectId: toProjectId, organizationId, name: e.name, description: e.description, env: e.env, isDefault: e.isDefault });
    }
  }

  // ------------------------------------------------------------ environment.*
  // create, update, remove and duplicate answer the environment's own fields, as the peer does.
  async create(input: CreateInput, organizationId: string, em: EntityManager, projects: ProjectDirectory): Promise<EnvironmentFields> {
    await projects.assertInOrganization(input.projectId, organizationId, em);
    await this.#assertNameFree(input.projectId, input.name, em);
    const row = this.#new(em, { projectId: input.projectId, organizationId, name: input.name, description: input.description });
    await em.flush();
    return this.#toFields(row);
  }

  /** The environment with its workloads and its project. */
  async one(environmentId: string, organizationId: string, em: EntityManager): Promise<EnvironmentView & { project: ProjectFields }> {
    const { project, ...fields } = await this.placement(environmentId, organizationId, em);
    const [view] = await this.#views([fields], em);
    return { ...view!, project };
  }

  /** The project's environments with their workloads, each with the project. */
  async byProjectId(projectId: string, organizationId: string, em: EntityManager): Promise<(EnvironmentView & { project: ProjectFields })[]> {
    const rows = await em.execute<EnvironmentRecord[]>(`${selectList} where project_id = ? and organization_id = ? ${listOrderSql}`, [projectId, organizationId]);
    if (!rows.length) throw notFound('Project');
    const { project } = await this.placement(rows[0]!.environment_id, organizationId, em);
    return (await this.#views(rows.map(this.#fromRecord), em)).map(view => ({ ...view, project }));
  }

  async update(input: UpdateInput, organizationId: string, em: EntityManager): Promise<EnvironmentFields> {
    const row = await this.#find(input.environmentId, organizationId, em);
    if (input.name !== undefined && input.name !== row.name) {
      // The older variant finds a project's workloads by its "production" environment.
      if (row.isDefault) throw badRequest('The default environment cannot be renamed', [{ path: ['name'], message: 'name: the default environment cannot be renamed' }]);
      await this.#assertNameFree(row.projectId, input.name, em);
      row.name = input.name;
    }
    if (input.description !== undefined) row.description = input.description;
    if (input.env !== undefined) row.env = this.#secrets().sealText(input.env);
    await em.flush();
    return this.#toFields(row);
  }

  /** Deletes a non-default environment after removing its workloads through their kinds (services, files, ports, deployments). Answers it as it was. */
  async remove(environmentId: string, organizationId: string, em: EntityManager): Promise<EnvironmentFields> {
    const row = await this.#find(environmentId, organizationId, em);
    if (row.isDefault) throw badRequest('The default environment cannot be removed');
    const fields = this.#toFields(row);
    await this.#workloads.removeIn([environmentId], em);
    await em.nativeDelete(Environment, { environmentId, organizationId });
    return fields;
  }

  /** A new environment in the same project with the source's variables; workloads are not copied. */
  async duplicate(input: DuplicateInput, organizationId: string, em: EntityManager): Promise<EnvironmentFields> {
    const source = await this.#find(input.environmentId, organizationId, em);
    await this.#assertNameFree(source.projectId, input.name, em);
    const row = this.#new(em, {
      projectId: source.projectId,
      organizationId,
      name: input.name,
      description: input.description !== undefined ? input.description : source.description,
      env: source.env,
    });
    await em.flush();
    return this.#toFields(row);
  }

  async search(input: SearchInput, organizationId: string, em: EntityManager): Promise<SearchResult> {
    const and: object[] = [{ organizationId }, ...textSearchClauses(input)];
    if (input.projectId) and.push({ projectId: input.projectId });
    const [rows, total] = await em.findAndCount(Environment, { $and: and }, { orderBy: { createdAt: 'desc', environmentId: 'asc' }, limit: input.limit ?? 20, offset: input.offset ?? 0 });
    return { items: rows.map(this.#toFields), total };
  }

  // ------------------------------------------------------------ helpers
  async #find(environmentId: string, organizationId: string, em: EntityManager): Promise<EnvironmentRow> {
    const row = await em.findOne(Environment, { environmentId, organizationId });
    if (!row) throw notFound('Environment');
    return row;
  }

  async #assertNameFree(projectId: string, name: string, em: EntityManager): Promise<void> {
    if (await em.count(Environment, { projectId, name })) throw conflict(`The project already has an environment named "${name}"`);
  }

  /** A new row; `env` as stored (sealed), e.g. copied from another row. */
  #new(em: EntityManager, e: { projectId: string; organizationId: string; name: string; description?: string | null; env?: string; isDefault?: boolean }): EnvironmentRow {
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

  async #views(environments: EnvironmentFields[], em: EntityManager): Promise<EnvironmentView[]> {
    const workloads = await this.#workloads.collect(
      environments.map(e => e.environmentId),
      em,
    );
    return environments.map(e => ({ ...e, ...(workloads.get(e.environmentId) ?? this.#workloads.empty()) }));
  }
}

/**
 * environment.* for one request: the service confined to the caller's organization and the
 * request's unit of work. Registered request-scoped as `callerEnvironments`; other plugins
 * keep using the singleton `environments` directory.
 */
export const callerEnvironments =
  (environments: EnvironmentService) =>
  ({ principal, em, projects }: Cradle) => {
    const organizationId = principal!.organizationId;
    return {
      /** Adds an environment to one of the organization's projects. */
      create: (input: CreateInput) => environments.create(input, organizationId, em, projects),
      /** An environment with its workloads. */
      one: (environmentId: string) => environments.one(environmentId, organizationId, em),
      /** A project's environments, default first. */
      byProjectId: (projectId: string) => environments.byProjectId(projectId, organizationId, em),
      /** Deletes a non-default environment with its workloads. */
      remove: (environmentId: string) => environments.remove(environmentId, organizationId, em),
      /** Changes an environment's fields. */
      update: (input: UpdateInput) => environments.update(input, organizationId, em),
      /** A copy of an environment in its project. */
      duplicate: (input: DuplicateInput) => environments.duplicate(input, organizationId, em),
      /** Environments matching a text, paged. */
      search: (input: SearchInput) => environments.search(input, organizationId, em),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    /** environment.* for the current request's caller (request scope only). */
    callerEnvironments: ReturnType<ReturnType<typeof callerEnvironments>>;
  }
}
