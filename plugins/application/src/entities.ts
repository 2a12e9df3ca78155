// An application: where it runs (environment, host), how it is built (source and build
// type) and how Swarm runs it. Fields the platform filters or acts on are columns; the
// rest are in `settings` (JSON) and the secrets in `sealed` (SecretBox of a JSON object).
import { defineEntity, p, newId } from '@berth/core';
import { pushColumns, workloadColumns } from '@berth/plugin-workloads';

export const Application = defineEntity({
  name: 'Application',
  tableName: 'applications',
  properties: {
    applicationId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    ...workloadColumns(),
    sourceType: p.string().length(16),
    buildType: p.string().length(24),
    applicationStatus: p.string().length(8),
    ...pushColumns(),
    /** Every other API field (see fields.ts). */
    settings: p.json<Record<string, unknown>>(),
    /** env, build args and secrets, registry password: SecretBox-sealed JSON. */
    sealed: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type ApplicationRow = InstanceType<typeof Application.class>;
export const applicationEntities = [Application];
