// The workload kit as a plugin: it offers the registry of workload kinds, the container hosts
// and the host's published ports through the container; the kinds (application, the database
// kinds, a third party's) build on it and register themselves.
import { asClass, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { LocalContainerHosts } from './hosts/local-engine.ts';
import { HostPorts } from './host-ports.ts';
import { WorkloadRegistry } from './registry.ts';
import { adoptServices } from './adoption.ts';

export * from './kit.ts';

export default definePlugin({
  name: 'workloads',
  version: pkg.version,
  setup(berth) {
    berth.provide({
      workloads: asValue(new WorkloadRegistry({ cradle: () => berth.container.cradle })),
      hosts: asClass(LocalContainerHosts).singleton(),
      hostPorts: asValue(new HostPorts()),
    });
    // Kinds register during setup, so by now every record's kind can answer for its services.
    berth.onStart(async ({ workloads, hosts, orm, logger }) => {
      try {
        await adoptServices(workloads, hosts, orm.em.fork(), logger);
      } catch (e) {
        // An engine that is down at boot is no reason to refuse to start: the next boot adopts them.
        logger.warn({ err: e }, 'could not adopt the services made before owner labels');
      }
    });
  },
});
