// A compose stack: where it runs (environment, host), its file (stored, or where the git
// checkout has it) and how it runs (compose type). Fields the platform filters or acts on are
// columns; the rest are in `settings` (JSON) and the env in `sealed` (SecretBox text).
import { defineEntity, p, newId } from '@berth/core';
import { pushColumns, workloadColumns } from '@berth/plugin-workloads';

export const Compose = defineEntity({
  name: 'Compose',
  tableName: 'compose_stacks',
  properties: {
    composeId: p
      .string()
      .length(32)
      .primary()
      .onCreate(() => newId()),
    ...workloadColumns(),
    sourceType: p.string().length(16),
    composeType: p.string().length(16),
    composeStatus: p.string().length(8),
    ...pushColumns(),
    composeFile: p.text(),
    /** Every other API field (see fields.ts). */
    settings: p.json<Record<string, unknown>>(),
    /** The env: SecretBox-sealed text ('' sealed when none). */
    sealed: p.text(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type ComposeRow = InstanceType<typeof Compose.class>;
export const composeEntities = [Compose];
