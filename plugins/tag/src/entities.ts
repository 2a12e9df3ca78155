// An organization's tags and the projects they are on (the peer's tag and project_tag tables).
import { columns, defineEntity, p } from '@berth/core';

export const Tag = defineEntity({
  name: 'Tag',
  tableName: 'tags',
  uniques: [{ properties: ['organizationId', 'name'] }],
  properties: { tagId: columns.primaryId(), name: p.string(), color: p.string().nullable(), organizationId: columns.berthId(), createdAt: columns.createdAt() },
});

/** A tag on a project; both are the same organization's (tag.assignToProject checks it), and both take it away when removed. */
export const ProjectTagLink = defineEntity({
  name: 'ProjectTagLink',
  tableName: 'project_tags',
  uniques: [{ properties: ['projectId', 'tagId'] }],
  properties: { id: columns.primaryId(), projectId: columns.berthId(), tagId: columns.berthId().index() },
});

export type TagRow = InstanceType<typeof Tag.class>;
export type ProjectTagRow = InstanceType<typeof ProjectTagLink.class>;
export const tagEntities = [Tag, ProjectTagLink];
