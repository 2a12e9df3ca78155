// A project groups environments (which hold the workloads) inside one organization.
import { defineEntity, p, newId } from '@berth/core';

export const Project = defineEntity({
  name: 'Project',
  tableName: 'projects',
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    projectId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    name: p.string(),
    description: p.text().nullable(),
    /** Environment variables shared by the project's workloads, as text. */
    env: p.text().default(''),
    organizationId: p.string().length(32),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type ProjectRow = InstanceType<typeof Project.class>;
export const projectEntities = [Project];
