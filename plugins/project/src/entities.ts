// A project groups environments (which hold the workloads) inside one organization.
import { columns, defineEntity, p } from '@berth/core';

export const Project = defineEntity({
  name: 'Project',
  tableName: 'projects',
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    projectId: columns.primaryId(),
    name: p.string(),
    description: p.text().nullable(),
    /** Environment variables shared by the project's workloads, as text. */
    env: p.text().default(''),
    organizationId: columns.berthId(),
    createdAt: columns.createdAt(),
  },
});

export type ProjectRow = InstanceType<typeof Project.class>;
export const projectEntities = [Project];
