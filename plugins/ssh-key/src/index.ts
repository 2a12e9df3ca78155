import { asClass, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { sshKeyEntities } from './entities.ts';
import { sshKeyMigrations } from './migrations.ts';
import { sshKeyProcedures } from './procedures.ts';
import { SshKeyRequests } from './requests.ts';
import { SshKeyService } from './service.ts';

export default definePlugin({
  name: 'ssh-key',
  version: pkg.version,
  setup(berth) {
    const sshKeys = new SshKeyService(() => berth.container.cradle.secrets);
    berth.entities(...sshKeyEntities);
    berth.migrations(...sshKeyMigrations);
    berth.provide({ sshKeys: asValue(sshKeys), sshKeyRequests: asClass(SshKeyRequests).scoped() });
    berth.procedures(...sshKeyProcedures);
  },
});
