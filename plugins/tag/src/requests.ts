// tag.*: the tags of the caller's organization — made, listed, changed, removed — and the projects
// they are on. A tag or project of another organization is NOT_FOUND, never FORBIDDEN. Messages
// are the peer's. Request-scoped: the caller's organization and the request's unit of work come
// from the container.
import { BerthError, conflict, newId, RequestScope } from '@berth/core';
import { ProjectTagLink, Tag, type TagRow } from './entities.ts';
import type { Assignment, BulkAssignInput, CreateInput, ProjectTagInput, Success, TagView, UpdateInput } from './schemas.ts';
import { toView } from './service.ts';

const DUPLICATE_NAME = 'A tag with this name already exists in your organization';

/** Registered asClass(...).scoped() as `tagRequests`; the project plugin reads tags through the singleton `projectTags`. */
export class TagRequests extends RequestScope {
  async create(input: CreateInput): Promise<TagView> {
    await this.#assertNameFree(input.name);
    const row = this.em.create(Tag, { tagId: newId(), name: input.name, color: input.color ?? null, organizationId: this.organizationId, createdAt: new Date() });
    await this.em.flush();
    return toView(row);
  }

  /** By name, as the peer lists them. */
  async all(): Promise<TagView[]> {
    const rows = await this.em.find(Tag, { organizationId: this.organizationId }, { orderBy: { name: 'asc', tagId: 'asc' } });
    return rows.map(toView);
  }

  async one(tagId: string): Promise<TagView> {
    return toView(await this.#find(tagId));
  }

  /** Changes name and color only: the peer's createdAt and organizationId are accepted and ignored. */
  async update(input: UpdateInput): Promise<TagView> {
    const row = await this.#find(input.tagId);
    if (input.name !== undefined && input.name !== row.name) {
      await this.#assertNameFree(input.name);
      row.name = input.name;
    }
    if (input.color !== undefined) row.color = input.color;
    await this.em.flush();
    return toView(row);
  }

  /** Deletes the tag; its links to projects go with it through their foreign key. */
  async remove(tagId: string): Promise<Success> {
    await this.#find(tagId);
    await this.em.nativeDelete(Tag, { tagId, organizationId: this.organizationId });
    return { success: true };
  }

  async assignToProject({ projectId, tagId }: ProjectTagInput): Promise<Assignment> {
    await this.#assertProject(projectId);
    await this.#find(tagId);
    if (await this.em.count(ProjectTagLink, { projectId, tagId })) throw conflict('This tag is already assigned to this project');
    const link = this.em.create(ProjectTagLink, { id: newId(), projectId, tagId });
    try {
      await this.em.flush();
    } catch (e) {
      // Two assignments at once both found none: the second meets the unique link, and is told so as the first check would have.
      if ((e as { name?: string }).name === 'UniqueConstraintViolationException') throw conflict('This tag is already assigned to this project');
      throw e;
    }
    return { id: link.id, projectId, tagId };
  }

  async removeFromProject({ projectId, tagId }: ProjectTagInput): Promise<Success> {
    await this.#assertProject(projectId);
    await this.#find(tagId);
    await this.em.nativeDelete(ProjectTagLink, { projectId, tagId });
    return { success: true };
  }

  /** The project's tags become exactly `tagIds` (each once), in one transaction. */
  async bulkAssign({ projectId, tagIds }: BulkAssignInput): Promise<Success> {
    await this.#assertProject(projectId);
    const wanted = [...new Set(tagIds)];
    if (wanted.length && (await this.em.count(Tag, { tagId: { $in: wanted }, organizationId: this.organizationId })) !== wanted.length) {
      throw new BerthError('NOT_FOUND', 'One or more tags not found in your organization');
    }
    await this.em.transactional(async tx => {
      await tx.nativeDelete(ProjectTagLink, { projectId });
      for (const tagId of wanted) tx.create(ProjectTagLink, { id: newId(), projectId, tagId });
    });
    return { success: true };
  }

  // ------------------------------------------------------------ helpers
  /** One of the organization's tags (NOT_FOUND otherwise). */
  #find(tagId: string): Promise<TagRow> {
    return this.owned(Tag, { tagId }, 'Tag');
  }

  /** NOT_FOUND unless the project is the organization's (the project plugin's directory). */
  #assertProject(projectId: string): Promise<void> {
    return this.cradle.projects.assertInOrganization(projectId, this.organizationId, this.em);
  }

  /** A name is the organization's once (a race past this check is the database's unique constraint: 409 too). */
  async #assertNameFree(name: string): Promise<void> {
    if (await this.em.count(Tag, { organizationId: this.organizationId, name })) throw conflict(DUPLICATE_NAME);
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** tag.* for the current request's caller (request scope only). */
    tagRequests: TagRequests;
  }
}
