import { asClass, asValue, definePlugin, ownerColumn } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { Mount, mountEntities } from './entities.ts';
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
    // A member given some services reaches a mount through its workload; serviceId (mounts.create, listByServiceId) is the workload itself.
    berth.recordOwners({ mountId: { what: 'Mount', owner: ownerColumn(Mount, 'mountId', 'serviceId') }, serviceId: { what: 'Service', owner: async id => ({ kind: 'services', id }) } });
    berth.provide({ mounts: asValue(mounts), mountRequests: asClass(MountRequests).scoped() });
    berth.procedures(mountProcedures(mounts));
  },
});
