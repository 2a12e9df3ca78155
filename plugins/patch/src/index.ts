// The patch plugin: patch.* records and checkouts, offered to the workload kit as `workloadPatches`
// (each deploy of a kind that builds a checkout applies them before the build).
import { asClass, asValue, definePlugin, ownerColumn } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { Patch, patchEntities } from './entities.ts';
import { patchMigrations } from './migrations.ts';
import { patchProcedures } from './procedures.ts';
import { PatchRequests } from './requests.ts';
import { PatchService } from './service.ts';

export default definePlugin({
  name: 'patch',
  version: pkg.version,
  dependencies: ['workloads'],
  setup(berth) {
    const patches = new PatchService(() => berth.container.cradle);
    berth.entities(...patchEntities);
    berth.migrations(...patchMigrations);
    // A member given some services reaches a patch through its workload.
    berth.recordOwners({ patchId: { what: 'Patch', owner: ownerColumn(Patch, 'patchId', 'serviceId') } });
    berth.provide({ patches: asValue(patches), workloadPatches: asValue(patches), patchRequests: asClass(PatchRequests).scoped() });
    berth.procedures(patchProcedures(patches));
    berth.onStart(() => patches.removeUnfinished());
  },
});
