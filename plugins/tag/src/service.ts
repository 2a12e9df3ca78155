// The tags of projects as the project plugin reads them (projectTags): each project's tags, in one
// query for any number of projects. Confined to one organization like every read. tag.* is requests.ts.
import { iso, type EntityManager, type ProjectTag, type ProjectTagDirectory, type TagFields } from '@berth/core';
import type { TagRow } from './entities.ts';

export const toView = (t: TagRow): TagFields => ({ tagId: t.tagId, name: t.name, color: t.color ?? null, createdAt: iso(t.createdAt)!, organizationId: t.organizationId });

/** A project_tags row joined with its tag, as SQL answers it. */
interface LinkRecord {
  id: string;
  project_id: string;
  tag_id: string;
  name: string;
  color: string | null;
  created_at: Date;
  organization_id: string;
}

export class TagService implements ProjectTagDirectory {
  async forProjects(projectIds: string[], organizationId: string, em: EntityManager): Promise<Map<string, ProjectTag[]>> {
    const out = new Map<string, ProjectTag[]>(projectIds.map(id => [id, []]));
    if (!projectIds.length) return out;
    const rows = await em.execute<LinkRecord[]>(
      `select l.id, l.project_id, l.tag_id, t.name, t.color, t.created_at, t.organization_id from project_tags l join tags t on t.tag_id = l.tag_id
       where l.project_id in (?) and t.organization_id = ? order by t.name, t.tag_id`,
      [projectIds, organizationId],
    );
    for (const r of rows) {
      const tag = { tagId: r.tag_id, name: r.name, color: r.color, createdAt: iso(r.created_at)!, organizationId: r.organization_id };
      out.get(r.project_id)?.push({ id: r.id, projectId: r.project_id, tagId: r.tag_id, tag });
    }
    return out;
  }
}
