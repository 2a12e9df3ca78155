// Projects as other plugins use them (the ProjectDirectory): whether a project is an
// organization's. Every read is confined to one organization: a project of another one is
// NOT_FOUND, never FORBIDDEN. project.* is requests.ts.
import { notFound, type EntityManager, type ProjectDirectory, type SecretBox } from '@berth/core';
import { Project } from './entities.ts';

/** A project's env may hold secrets: it is sealed at rest (SecretBox) and opened only to answer. */
export class ProjectService implements ProjectDirectory {
  readonly #secrets: () => SecretBox;

  constructor(secrets: () => SecretBox) {
    this.#secrets = secrets;
  }

  /** Seals the env of rows written before it was sealed (run at start; a no-op once done). */
  async sealStoredEnv(em: EntityManager): Promise<number> {
    const rows = await em.execute<{ project_id: string; env: string }[]>("select project_id, env from projects where env <> '' and env not like 'v1:%'");
    for (const r of rows) await em.execute('update projects set env = ? where project_id = ? and env = ?', [this.#secrets().sealText(r.env), r.project_id, r.env]);
    return rows.length;
  }
  async assertInOrganization(projectId: string, organizationId: string, em: EntityManager): Promise<void> {
    if (!(await em.count(Project, { projectId, organizationId }))) throw notFound('Project');
  }
}
