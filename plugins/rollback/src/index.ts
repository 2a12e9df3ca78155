// The rollback plugin: rollback.* and the releases applications keep to roll back to, offered to
// the workload kit as `workloadRollbacks` (each successful deploy keeps its release; a rollback
// deployment rolls one out again; a cleanup leaves their images).
import { asClass, asValue, definePlugin, ownerColumn } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { Rollback, rollbackEntities } from './entities.ts';
import { rollbackMigrations } from './migrations.ts';
import { rollbackProcedures } from './procedures.ts';
import { RollbackRequests } from './requests.ts';
import { RollbackService } from './service.ts';

export default definePlugin({
  name: 'rollback',
  version: pkg.version,
  config,
  dependencies: ['workloads', 'deployment'],
  uses: ['registry'], // used when enabled (optionalService): releases pushed to a rollback registry
  setup(berth) {
    const rollbacks = new RollbackService(() => berth.container.cradle);
    berth.entities(...rollbackEntities);
    berth.migrations(...rollbackMigrations);
    // A member given some services reaches a release through its workload.
    berth.recordOwners({ rollbackId: { what: 'Rollback', owner: ownerColumn(Rollback, 'rollbackId', 'serviceId') } });
    berth.provide({ rollbacks: asValue(rollbacks), workloadRollbacks: asValue(rollbacks), rollbackRequests: asClass(RollbackRequests).scoped() });
    berth.procedures(rollbackProcedures);
  },
});
