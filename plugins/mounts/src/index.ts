import { asClass, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { mountEntities } from './entities.ts';
import { mountMigrations } from './migrations.ts';
import { mountProcedures } from './procedures.ts';
import { MountRequests } from './requests.ts';
import { MountService } from './service.ts';

export default definePlugin({
  name: 'mounts',
  version: pkg.version,
  dependencies: ['workloads'],
  setup(berth) {
    const mounts = new MountService({ workloads: berth.container.cradle.workloads, secrets: () => berth.container.cradle.secrets });
    berth.entities(...mountEntities);
    berth.migrations(...mountMigrations);
    berth.provide({ mounts: asValue(mounts), mountRequests: asClass(MountRequests).scoped() });
    berth.procedures(mountProcedures(mounts));
  },
});
