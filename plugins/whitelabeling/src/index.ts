// The whitelabeling plugin: whitelabeling.*, the instance's name, logos, links, texts and CSS, kept
// in its own table and served for everyone (the peer keeps it behind its licence).
import { asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { whitelabelingEntities } from './entities.ts';
import { whitelabelingMigrations } from './migrations.ts';
import { whitelabelingProcedures } from './procedures.ts';
import { WhitelabelingSettings } from './service.ts';

export default definePlugin({
  name: 'whitelabeling',
  version: pkg.version,
  setup(berth) {
    berth.entities(...whitelabelingEntities);
    berth.migrations(...whitelabelingMigrations);
    berth.provide({ whitelabeling: asValue(new WhitelabelingSettings()) });
    berth.procedures(...whitelabelingProcedures);
  },
});
