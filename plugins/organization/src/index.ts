import { definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { organizationProcedures } from './procedures.ts';

export default definePlugin({
  name: 'organization',
  version: pkg.version,
  setup(berth) {
    berth.procedures(...organizationProcedures);
  },
});
