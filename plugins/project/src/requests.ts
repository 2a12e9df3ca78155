// project.*: the projects of the caller's organization — made with their default environment, one,
// all, changed, removed, duplicated, searched. Every read and write is confined to the caller's
// organization: a project of another one is NOT_FOUND, never FORBIDDEN. Request-scoped: the
// caller's organization and the request's transaction come from the container.
import {
  iso,
  narrowEnvironment,
  newId,
  optionalService,
  reaches,
  RequestScope,
  searchPage,
  textSearchClauses,
  type EnvironmentDirectory,
  type EnvironmentFields,
  type EnvironmentRef,
} from '@berth/core';
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

/**
 * Registered asClass(...).scoped() as `projectRequests`; other plugins use the singleton `projects`
 * directory. A project's env may hold secrets: it is sealed at rest (SecretBox) and opened only to answer.
 */
export class ProjectRequests extends RequestScope {
  /** The environment plugin's directory: it registers after this plugin, so it is resolved per request, on use. */
  get #environments(): EnvironmentDirectory {
    return this.cradle.environments;
  }

  /** The project and its default environment, stored in one flush. */
  async create(input: CreateInput): Promise<{ project: ProjectFields; environment: EnvironmentFields }> {
    const project = this.#new(input);
    const production = this.#environments.createDefault(project.projectId, this.organizationId, this.em);
    await this.grantCreated('projects', project.projectId);
    await this.grantCreated('environments', production.environmentId);
    await this.em.flush();
    const { project: _project, ...environment } = await this.#environments.placement(production.environmentId, this.organizationId, this.em);
    return { project: this.#fields(project), environment };
  }

  /** A project with its environments and their workloads. */
  async one(projectId: string): Promise<ProjectView> {
    const [view] = await this.#withEnvironments([this.#fields(await this.#find(projectId))]);
    return view!;
  }

  /** Every project of the organization, newest first (as the peer lists them), in a fixed number of queries. */
  async all(): Promise<ProjectView[]> {
    const rows = await this.em.execute<ProjectRecord[]>(
      'select project_id, name, description, env, organization_id, created_at from projects where organization_id = ? order by created_at desc, project_id',
      [this.organizationId],
    );
    return this.#withEnvironments(rows.map(this.#fromRecord).filter(p => reaches(this.principal.grants, 'projects', p.projectId)));
  }

  /** Changes a project's fields. */
  async update(input: UpdateInput): Promise<ProjectFields> {
    const project = await this.#find(input.projectId);
    if (input.name !== undefined) project.name = input.name;
    if (input.description !== undefined) project.description = input.description;
    if (input.env !== undefined) project.env = this.cradle.secrets.sealText(input.env);
    await this.em.flush();
    return this.#fields(project);
  }

  /** Deletes the project after its workloads are removed through their kinds; its environments go with it through their foreign keys. */
  async remove(projectId: string): Promise<ProjectFields> {
    const project = await this.#find(projectId);
    const fields = this.#fields(project);
    await this.#environments.removeWorkloadsOf(projectId, this.organizationId, this.em);
    await this.em.nativeDelete(Project, { projectId, organizationId: this.organizationId });
    return fields;
  }

  /**
   * A new project named `name` with a copy of every environment (name, description, env) of
   * the source environment's project. No workload plugin exists yet, so there are no services
   * to copy: includeServices and selectedServices have nothing to act on.
   */
  async duplicate(input: DuplicateInput): Promise<ProjectView> {
    const source = await this.environment(input.sourceEnvironmentId);
    const sourceProject = await this.#find(source.projectId);
    const project = this.#new({ name: input.name, description: input.description, env: this.cradle.secrets.openText(sourceProject.env) });
    await this.#environments.copyEnvironments(sourceProject.projectId, project.projectId, this.organizationId, this.em);
    await this.em.flush();
    return this.one(project.projectId);
  }

  /** The environment (and its project) as the caller may see it. */
  environment(environmentId: string): Promise<EnvironmentRef> {
    return this.#environments.get(environmentId, this.organizationId, this.em);
  }

  /** Projects matching a text, paged. */
  async search(input: SearchInput): Promise<SearchResult> {
    const { records } = this.principal.grants;
    const and: object[] = [{ organizationId: this.organizationId }, ...(records ? [{ projectId: { $in: records.projects } }] : []), ...textSearchClauses(input)];
    const [rows, total] = await searchPage(this.em, Project, and, 'projectId', input);
    return { items: rows.map(this.#fields), total };
  }

  // ------------------------------------------------------------ helpers
  async #withEnvironments(projects: ProjectFields[]): Promise<ProjectView[]> {
    const ids = projects.map(p => p.projectId);
    if (!ids.length) return [];
    const byProject = await this.#environments.listForProjects(ids, this.organizationId, this.em);
    // The tag plugin's, when it is enabled: without it a project lists no tags.
    const tags = await optionalService(this.cradle, 'projectTags')?.forProjects(ids, this.organizationId, this.em);
    // A member given records one by one sees only its environments and services (the peer's narrowing).
    const { grants } = this.principal;
    const environments = (projectId: string) =>
      ((byProject.get(projectId) ?? []) as EnvironmentView[]).filter(e => reaches(grants, 'environments', e.environmentId)).map(e => narrowEnvironment(grants, e));
    return projects.map(p => ({ ...p, environments: environments(p.projectId), projectTags: tags?.get(p.projectId) ?? [] }));
  }

  #find(projectId: string): Promise<ProjectRow> {
    return this.owned(Project, { projectId }, 'Project');
  }

  #new(fields: { name: string; description?: string | null; env?: string }): ProjectRow {
    // Ids are set here, not on flush, so the default environment can refer to the project in the same unit of work.
    return this.em.create(Project, {
      projectId: newId(),
      name: fields.name,
      description: fields.description ?? null,
      env: this.cradle.secrets.sealText(fields.env ?? ''),
      organizationId: this.organizationId,
      createdAt: new Date(),
    });
  }

  readonly #fields = (p: ProjectRow): ProjectFields => ({
    projectId: p.projectId,
    name: p.name,
    description: p.description ?? null,
    env: this.cradle.secrets.openText(p.env),
    organizationId: p.organizationId,
    createdAt: iso(p.createdAt)!,
  });

  readonly #fromRecord = (r: ProjectRecord): ProjectFields => ({
    projectId: r.project_id,
    name: r.name,
    description: r.description,
    env: this.cradle.secrets.openText(r.env),
    organizationId: r.organization_id,
    createdAt: iso(r.created_at)!,
  });
}

declare module '@berth/core' {
  interface Cradle {
    /** project.* for the current request's caller (request scope only). */
    projectRequests: ProjectRequests;
  }
}
