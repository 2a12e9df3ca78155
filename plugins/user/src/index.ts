import { asClass, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { userEntities } from './entities.ts';
import { userMigrations } from './migrations.ts';
import { userBackupProcedures, userProcedures } from './procedures.ts';
import { UserService } from './users.ts';
import { MemberGrants } from './grants.ts';
import { grantProcedures } from './grant-procedures.ts';

export default definePlugin({
  name: 'user',
  version: pkg.version,
  uses: ['backups'], // used when enabled (optionalService): user.getBackups lists the web-server backups
  setup(berth) {
    berth.entities(...userEntities);
    berth.migrations(...userMigrations);
    berth.provide({ users: asClass(UserService).singleton(), memberGrants: asClass(MemberGrants).scoped() });
    berth.procedures(
      ...userProcedures,
      ...grantProcedures,
      userBackupProcedures(() => berth.container.cradle),
    );
  },
});
