import { asClass, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { userProcedures } from './procedures.ts';
import { UserService } from './users.ts';

export default definePlugin({
  name: 'user',
  version: pkg.version,
  setup(berth) {
    berth.provide({ users: asClass(UserService).singleton() });
    berth.procedures(...userProcedures);
  },
});
