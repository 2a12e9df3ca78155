// The workload kit as a plugin: it offers the registry of workload kinds, the container hosts
// and the host's published ports through the container; the kinds (application, the database
// kinds, a third party's) build on it and register themselves.
import { asClass, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { LocalContainerHosts } from './hosts/local-engine.ts';
import { HostPorts } from './host-ports.ts';
import { WorkloadRegistry } from './registry.ts';

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
  },
});
