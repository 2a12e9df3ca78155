// environment.*: the environments of the caller's organization's projects — added, one, a project's,
// changed, removed, duplicated, searched. A record of another organization is NOT_FOUND, never
// FORBIDDEN. Request-scoped: the caller's organization and the request's transaction come from the
// container.
import { badRequest, conflict, iso, narrowEnvironment, notFound, reaches, RequestScope, searchPage, textSearchClauses, type ProjectFields } from '@berth/core';
import { Environment, type EnvironmentRow } from './entities.ts';
import type { CreateInput, DuplicateInput, EnvironmentFields, EnvironmentView, SearchInput, SearchResult, UpdateInput } from './schemas.ts';
import { fromRecord, listOrderSql, newEnvironment, selectList, withWorkloads, type EnvironmentRecord } from './service.ts';

/**
 * Registered asClass(...).scoped() as `environmentRequests`; other plugins use the singleton
 * `environments` directory. An environment's env may hold secrets: sealed at rest (SecretBox),
 * opened only to answer and to deploy.
 */
export class EnvironmentRequests extends RequestScope {
  // create, update, remove and duplicate answer the environment's own fields, as the peer does.
  /** Adds an environment to one of the organization's projects. */
  async create(input: CreateInput): Promise<EnvironmentFields> {
    await this.cradle.projects.assertInOrganization(input.projectId, this.organizationId, this.em);
    await this.#assertNameFree(input.projectId, input.name);
    const row = newEnvironment(this.em, { projectId: input.projectId, organizationId: this.organizationId, name: input.name, description: input.description });
    await this.grantCreated('environments', row.environmentId);
    await this.em.flush();
    return this.#toFields(row);
  }

  /** The environment with its workloads and its project. */
  async one(environmentId: string): Promise<EnvironmentView & { project: ProjectFields }> {
    const { project, ...fields } = await this.cradle.environments.placement(environmentId, this.organizationId, this.em);
    const [view] = await withWorkloads([fields], this.cradle.workloads, this.em);
    return { ...narrowEnvironment(this.principal.grants, view!), project };
  }

  /** The project's environments with their workloads, each with the project. */
  async byProjectId(projectId: string): Promise<(EnvironmentView & { project: ProjectFields })[]> {
    const rows = await this.em.execute<EnvironmentRecord[]>(`${selectList} where project_id = ? and organization_id = ? ${listOrderSql}`, [projectId, this.organizationId]);
    if (!rows.length) throw notFound('Project');
    const { project } = await this.cradle.environments.placement(rows[0]!.environment_id, this.organizationId, this.em);
    const secrets = this.cradle.secrets;
    const views = await withWorkloads(
      rows.map(r => fromRecord(r, secrets)),
      this.cradle.workloads,
      this.em,
    );
    // A member given records one by one sees only its environments and services.
    const { grants } = this.principal;
    return views.filter(view => reaches(grants, 'environments', view.environmentId)).map(view => ({ ...narrowEnvironment(grants, view), project }));
  }

  /** Changes an environment's fields. */
  async update(input: UpdateInput): Promise<EnvironmentFields> {
    const row = await this.#find(input.environmentId);
    if (input.name !== undefined && input.name !== row.name) {
      // The older variant finds a project's workloads by its "production" environment.
      if (row.isDefault) throw badRequest('The default environment cannot be renamed', [{ path: ['name'], message: 'name: the default environment cannot be renamed' }]);
      await this.#assertNameFree(row.projectId, input.name);
      row.name = input.name;
    }
    if (input.description !== undefined) row.description = input.description;
    if (input.env !== undefined) row.env = this.cradle.secrets.sealText(input.env);
    await this.em.flush();
    return this.#toFields(row);
  }

  /** Deletes a non-default environment after removing its workloads through their kinds (services, files, ports, deployments). Answers it as it was. */
  async remove(environmentId: string): Promise<EnvironmentFields> {
    const row = await this.#find(environmentId);
    if (row.isDefault) throw badRequest('The default environment cannot be removed');
    const fields = this.#toFields(row);
    await this.cradle.workloads.removeIn([environmentId], this.em);
    await this.em.nativeDelete(Environment, { environmentId, organizationId: this.organizationId });
    return fields;
  }

  /** A new environment in the same project with the source's variables; workloads are not copied. */
  async duplicate(input: DuplicateInput): Promise<EnvironmentFields> {
    const source = await this.#find(input.environmentId);
    await this.#assertNameFree(source.projectId, input.name);
    const row = newEnvironment(this.em, {
      projectId: source.projectId,
      organizationId: this.organizationId,
      name: input.name,
      description: input.description !== undefined ? input.description : source.description,
      env: source.env,
    });
    await this.em.flush();
    return this.#toFields(row);
  }

  /** Environments matching a text, paged. */
  async search(input: SearchInput): Promise<SearchResult> {
    const { records } = this.principal.grants;
    const and: object[] = [{ organizationId: this.organizationId }, ...(records ? [{ environmentId: { $in: [...records.environments] } }] : []), ...textSearchClauses(input)];
    if (input.projectId) and.push({ projectId: input.projectId });
    const [rows, total] = await searchPage(this.em, Environment, and, 'environmentId', input);
    return { items: rows.map(this.#toFields), total };
  }

  // ------------------------------------------------------------ helpers
  #find(environmentId: string): Promise<EnvironmentRow> {
    return this.owned(Environment, { environmentId }, 'Environment');
  }

  async #assertNameFree(projectId: string, name: string): Promise<void> {
    if (await this.em.count(Environment, { projectId, name })) throw conflict(`The project already has an environment named "${name}"`);
  }

  readonly #toFields = (e: EnvironmentRow): EnvironmentFields => ({
    environmentId: e.environmentId,
    name: e.name,
    description: e.description ?? null,
    env: this.cradle.secrets.openText(e.env),
    projectId: e.projectId,
    isDefault: e.isDefault,
    createdAt: iso(e.createdAt)!,
  });
}

declare module '@berth/core' {
  interface Cradle {
    /** environment.* for the current request's caller (request scope only). */
    environmentRequests: EnvironmentRequests;
  }
}
