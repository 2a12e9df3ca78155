// Projects of one organization. Every read and write is confined to the caller's
// organization: a project of another one is NOT_FOUND, never FORBIDDEN.
import { iso, textSearchClauses, newId, notFound, type Cradle, type EntityManager, type EnvironmentDirectory, type EnvironmentFields, type ProjectDirectory, type SecretBox } from '@berth/core';
import { Project, type ProjectRow } from './entities.ts';
import type { CreateInput, DuplicateInput, EnvironmentView, ProjectFields, ProjectView, SearchInput, SearchResult, UpdateInput } from './schemas.ts';

/** A projects row as SQL answers it; lists are read without the ORM's entity hydration, which costs ten times the query. */
interface ProjectRecord {
  project_id: string;
  name: string;
  description: string | null;
  env: string;
  organization_id: string;
  created_at: Date;
}

/** A project's env may hold secrets: it is sealed at rest (SecretBox) and opened only to answer. */
export class ProjectService implements ProjectDirectory {
  readonly #secrets: () => SecretBox;

  constructor(secrets: () => SecretBox) {
    this.#secrets = secrets;
  }

  readonly #fields = (p: ProjectRow): ProjectFields => ({
    projectId: p.projectId,
    name: p.name,
    description: p.description ?? null,
    env: this.#secrets().openText(p.env),
    organizationId: p.organizationId,
    createdAt: iso(p.createdAt)!,
  });

  readonly #fromRecord = (r: ProjectRecord): ProjectFields => ({
    projectId: r.project_id,
    name: r.name,
    description: r.description,
    env: this.#secrets().openText(r.env),
    organizationId: r.organization_id,
    createdAt: iso(r.created_at)!,
  });

  /** Seals the env of rows written before it was sealed (run at start; a no-op once done). */
  async sealStoredEnv(em: EntityManager): Promise<number> {
    const rows = await em.execute<{ project_id: string; env: string }[]>("select project_id, env from projects where env <> '' and env not like 'v1:%'");
    for (const r of rows) await em.execute('update projects set env = ? where project_id = ? and env = ?', [this.#secrets().sealText(r.env), r.project_id, r.env]);
    return rows.length;
  }
  async assertInOrganization(projectId: string, organizationId: string, em: EntityManager): Promise<void> {
    if (!(await em.count(Project, { projectId, organizationId }))) throw notFound('Project');
  }

  async #find(projectId: string, organizationId: string, em: EntityManager): Promise<ProjectRow> {
    const project = await em.findOne(Project, { projectId, organizationId });
    if (!project) throw notFound('Project');
    return project;
  }

  #new(em: EntityManager, organizationId: string, fields: { name: string; description?: string | null; env?: string }): ProjectRow {
    // Ids are set here, not on flush, so the default environment can refer to the project in the same unit of work.
    return em.create(Project, {
      projectId: newId(),
      name: fields.name,
      description: fields.description ?? null,
      env: this.#secrets().sealText(fields.env ?? ''),
      organizationId,
      createdAt: new Date(),
    });
  }

  /** The project and its default environment, stored in one flush. */
  async create(input: CreateInput, organizationId: string, em: EntityManager, environments: EnvironmentDirectory): Promise<{ project: ProjectFields; environment: EnvironmentFields }> {
    const project = this.#new(em, organizationId, input);
    const production = environments.createDefault(project.projectId, organizationId, em);
    await em.flush();
    const { project: _project, ...environment } = await environments.placement(production.environmentId, organizationId, em);
    return { project: this.#fields(project), environment };
  }

  async one(projectId: string, organizationId: string, em: EntityManager, environments: EnvironmentDirectory): Promise<ProjectView> {
    const [view] = await this.#withEnvironments([this.#fields(await this.#find(projectId, organizationId, em))], organizationId, em, environments);
    return view!;
  }

  /** Every project of the organization, newest first (as the peer lists them), in a fixed number of queries. */
  async all(organizationId: string, em: EntityManager, environments: EnvironmentDirectory): Promise<ProjectView[]> {
    const rows = await em.execute<ProjectRecord[]>(
      'select project_id, name, description, env, organization_id, created_at from projects where organization_id = ? order by created_at desc, project_id',
      [organizationId],
    );
    return this.#withEnvironments(rows.map(this.#fromRecord), organizationId, em, environments);
  }

  async #withEnvironments(projects: ProjectFields[], organizationId: string, em: EntityManager, environments: EnvironmentDirectory): Promise<ProjectView[]> {
    const byProject = projects.length
      ? await environments.listForProjects(
          projects.map(p => p.projectId),
          organizationId,
          em,
        )
      : new Map();
    return projects.map(p => ({ ...p, environments: (byProject.get(p.projectId) ?? []) as EnvironmentView[], projectTags: [] }));
  }

  async update(input: UpdateInput, organizationId: string, em: EntityManager): Promise<ProjectFields> {
    const project = await this.#find(input.projectId, organizationId, em);
    if (input.name !== undefined) project.name = input.name;
    if (input.description !== undefined) project.description = input.description;
    if (input.env !== undefined) project.env = this.#secrets().sealText(input.env);
    await em.flush();
    return this.#fields(project);
  }

  /** Deletes the project after its workloads are removed through their kinds; its environments go with it through their foreign keys. */
  async remove(projectId: string, organizationId: string, em: EntityManager, environments: EnvironmentDirectory): Promise<ProjectFields> {
    const project = await this.#find(projectId, organizationId, em);
    const fields = this.#fields(project);
    await environments.removeWorkloadsOf(projectId, organizationId, em);
    await em.nativeDelete(Project, { projectId, organizationId });
    return fields;
  }

  /**
   * A new project named `name` with a copy of every environment (name, description, env) of
   * the source environment's project. No workload plugin exists yet, so there are no services
   * to copy: includeServices and selectedServices have nothing to act on.
   */
  async duplicate(input: DuplicateInput, organizationId: string, em: EntityManager, environments: EnvironmentDirectory): Promise<ProjectView> {
    const source = await environments.get(input.sourceEnvironmentId, organizationId, em);
    const sourceProject = await this.#find(source.projectId, organizationId, em);
    const project = this.#new(em, organizationId, { name: input.name, description: input.description, env: this.#secrets().openText(sourceProject.env) });
    await environments.copyEnvironments(sourceProject.projectId, project.projectId, organizationId, em);
    await em.flush();
    return this.one(project.projectId, organizationId, em, environments);
  }

  async search(input: SearchInput, organizationId: string, em: EntityManager): Promise<SearchResult> {
    const and: object[] = [{ organizationId }, ...textSearchClauses(input)];
    const [rows, total] = await em.findAndCount(Project, { $and: and }, { orderBy: { createdAt: 'desc', projectId: 'asc' }, limit: input.limit ?? 20, offset: input.offset ?? 0 });
    return { items: rows.map(this.#fields), total };
  }
}

/**
 * project.* for one request: the service confined to the caller's organization and the
 * request's unit of work, so handlers pass only their input. Registered request-scoped as
 * `callerProjects`; other plugins keep using the singleton `projects` directory.
 */
export const callerProjects =
  (projects: ProjectService) =>
  ({ principal, em, environments }: Cradle) => {
    const organizationId = principal!.organizationId;
    return {
      /** The project and its default environment. */
      create: (input: CreateInput) => projects.create(input, organizationId, em, environments),
      /** A project with its environments and their workloads. */
      one: (projectId: string) => projects.one(projectId, organizationId, em, environments),
      /** Every project, newest first. */
      all: () => projects.all(organizationId, em, environments),
      /** Changes a project's fields. */
      update: (input: UpdateInput) => projects.update(input, organizationId, em),
      /** Deletes a project with its environments and workloads. */
      remove: (projectId: string) => projects.remove(projectId, organizationId, em, environments),
      /** A copy of the source environment's project. */
      duplicate: (input: DuplicateInput) => projects.duplicate(input, organizationId, em, environments),
      /** The environment (and its project) as the caller may see it. */
      environment: (environmentId: string) => environments.get(environmentId, organizationId, em),
      /** Projects matching a text, paged. */
      search: (input: SearchInput) => projects.search(input, organizationId, em),
    };
  };

declare module '@berth/core' {
  interface Cradle {
    /** project.* for the current request's caller (request scope only). */
    callerProjects: ReturnType<ReturnType<typeof callerProjects>>;
  }
}
