import { asClass, asValue, definePlugin, ownerColumn } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { Port, portEntities } from './entities.ts';
import { portMigrations } from './migrations.ts';
import { portProcedures } from './procedures.ts';
import { PortRequests } from './requests.ts';
import { PortService } from './service.ts';

export default definePlugin({
  name: 'port',
  version: pkg.version,
  dependencies: ['workloads'],
  setup(berth) {
    const ports = new PortService();
    berth.container.cradle.hostPorts.add(ports);
    berth.entities(...portEntities);
    berth.migrations(...portMigrations);
    // A member given some services reaches a port through its application.
    berth.recordOwners({ portId: { what: 'Port', owner: ownerColumn(Port, 'portId', 'applicationId') } });
    berth.provide({ ports: asValue(ports), portRequests: asClass(PortRequests).scoped() });
    berth.procedures(...portProcedures);
  },
});
