import { asClass, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { authProcedures } from './procedures.ts';
import { TwoFactorService } from './two-factor.ts';
import { adminCommand } from './admin-command.ts';
import { ensureSetupToken, removeSetupToken } from './setup-token.ts';

export default definePlugin({
  name: 'auth',
  version: pkg.version,
  // Accounts are made and changed by the user plugin's service (auth.createAdmin, auth.createUser, auth.update…).
  dependencies: ['user'],
  commands: [adminCommand],
  setup(berth) {
    berth.provide({ twoFactor: asClass(TwoFactorService).singleton() });
    berth.procedures(...authProcedures);
    // A fresh instance: the first admin needs the setup token unless it is created from this machine.
    berth.onStart(async ({ accounts, config, logger }) => {
      if (await accounts.ownerExists()) removeSetupToken(config.dataDir);
      else if (!berth.headless) logger.info({ file: ensureSetupToken(config.dataDir) }, 'no admin yet: auth.createAdmin from another machine needs the setup token in this file');
    });
  },
});
