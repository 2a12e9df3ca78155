// The instance's whitelabeling: one row (key "instance"), its config as the peer's JSON column keeps
// it, so a field the peer adds later needs no new column.
import { defineEntity, p } from '@berth/core';
import type { WhitelabelingConfig } from './schemas.ts';

export const Whitelabeling = defineEntity({
  name: 'Whitelabeling',
  tableName: 'whitelabeling',
  properties: { key: p.string().length(16).primary(), config: p.json<Partial<WhitelabelingConfig>>(), updatedAt: p.datetime() },
});

export const whitelabelingEntities = [Whitelabeling];
