import { asClass, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { authProcedures } from './procedures.ts';
import { TwoFactorService } from './two-factor.ts';
import { adminCommand } from './admin-command.ts';

export default definePlugin({
  name: 'auth',
  version: pkg.version,
  // Accounts are made and changed by the user plugin's service (auth.createAdmin, auth.createUser, auth.update…).
  dependencies: ['user'],
  commands: [adminCommand],
  setup(berth) {
    berth.provide({ twoFactor: asClass(TwoFactorService).singleton() });
    berth.procedures(...authProcedures);
    // A fresh instance's setup token is the kernel's (written at start); createAdmin and `berth admin create` spend it.
  },
});
