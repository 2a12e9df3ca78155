// An environment belongs to a project; workloads belong to an environment. The organization
// is stored again here so every lookup is confined by one indexed column, without a join.
import { columns, defineEntity, p } from '@berth/core';

export const Environment = defineEntity({
  name: 'Environment',
  tableName: 'environments',
  uniques: [{ properties: ['projectId', 'name'] }],
  properties: {
    environmentId: columns.primaryId(),
    name: p.string(),
    description: p.text().nullable(),
    /** Environment variables shared by the environment's workloads, as text. */
    env: p.text().default(''),
    /** The project's "production" environment: where the older variant's `projectId` puts workloads. */
    isDefault: p.boolean().default(false),
    /** Indexed by the (projectId, name) unique constraint, whose first column it is. */
    projectId: columns.berthId(),
    organizationId: columns.berthId().index(),
    createdAt: columns.createdAt(),
  },
});

export type EnvironmentRow = InstanceType<typeof Environment.class>;
export const environmentEntities = [Environment];
