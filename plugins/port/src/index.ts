import { asFunction, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { portEntities } from './entities.ts';
import { portMigrations } from './migrations.ts';
import { portProcedures } from './procedures.ts';
import { callerPorts, PortService } from './service.ts';

export default definePlugin({
  name: 'port',
  version: pkg.version,
  dependencies: ['workloads'],
  setup(berth) {
    const ports = new PortService({
      workloads: berth.container.cradle.workloads,
      // Port 0 means an ephemeral port chosen at listen time: nothing to reserve.
      reservedLocalPorts: () => (berth.config.port ? [berth.config.port] : []),
      hostPorts: () => berth.container.cradle.hostPorts,
    });
    berth.container.cradle.hostPorts.add(ports);
    berth.entities(...portEntities);
    berth.migrations(...portMigrations);
    berth.provide({ ports: asValue(ports), callerPorts: asFunction(callerPorts(ports)).scoped() });
    berth.procedures(...portProcedures);
  },
});
