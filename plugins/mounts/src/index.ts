import { asFunction, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { mountEntities } from './entities.ts';
import { mountMigrations } from './migrations.ts';
import { mountProcedures } from './procedures.ts';
import { callerMounts, MountService } from './service.ts';

export default definePlugin({
  name: 'mounts',
  version: pkg.version,
  dependencies: ['workloads'],
  setup(berth) {
    const mounts = new MountService({
      workloads: berth.container.cradle.workloads,
      secrets: () => berth.container.cradle.secrets,
      hosts: () => berth.container.cradle.hosts,
      hostAccess: () => berth.container.cradle.hostAccess,
    });
    berth.entities(...mountEntities);
    berth.migrations(...mountMigrations);
    berth.provide({ mounts: asValue(mounts), callerMounts: asFunction(callerMounts(mounts)).scoped() });
    berth.procedures(mountProcedures(mounts));
  },
});
