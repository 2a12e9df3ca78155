import { definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { authProcedures } from './procedures.ts';

export default definePlugin({
  name: 'auth',
  version: pkg.version,
  setup(berth) {
    berth.procedures(...authProcedures);
  },
});
