import { definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { userProcedures } from './procedures.ts';

export default definePlugin({
  name: 'user',
  version: pkg.version,
  setup(berth) {
    berth.procedures(...userProcedures);
  },
});
