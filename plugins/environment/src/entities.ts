// An environment belongs to a project; workloads belong to an environment. The organization
// is stored again here so every lookup is confined by one indexed column, without a join.
import { defineEntity, p, newId } from '@berth/core';

export const Environment = defineEntity({
  name: 'Environment',
  tableName: 'environments',
  uniques: [{ properties: ['projectId', 'name'] }],
  properties: {
    environmentId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    name: p.string(),
    description: p.text().nullable(),
    /** Environment variables shared by the environment's workloads, as text. */
    env: p.text().default(''),
    /** The project's "production" environment: where the older variant's `projectId` puts workloads. */
    isDefault: p.boolean().default(false),
    /** Indexed by the (projectId, name) unique constraint, whose first column it is. */
    projectId: p.string().length(32),
    organizationId: p.string().length(32).index(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type EnvironmentRow = InstanceType<typeof Environment.class>;
export const environmentEntities = [Environment];
