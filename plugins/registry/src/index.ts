// The registry plugin: registry.* records, the push-and-pull check, and `registries` in the
// container for deploys that push and pull through a registry (credentials per engine call), also
// offered to the workload kit as `workloadRegistries` (the registries a workload names).
import { asClass, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { registryEntities } from './entities.ts';
import { registryMigrations } from './migrations.ts';
import { registryProcedures } from './procedures.ts';
import { RegistryRequests } from './requests.ts';
import { RegistryService } from './service.ts';

export type { RegistryService, RegistryForDeploy } from './service.ts';
export type { CliLogins } from './cli-login.ts';

export default definePlugin({
  name: 'registry',
  version: pkg.version,
  config,
  dependencies: ['hosts'],
  uses: ['domain', 'server'], // used when enabled (optionalService)
  setup(berth) {
    const registries = new RegistryService({
      secrets: () => berth.container.cradle.secrets,
      hosts: () => berth.container.cradle.hosts,
      cradle: () => berth.container.cradle,
      logger: berth.container.cradle.logger,
      registryImage: () => berth.config.registryImage,
    });
    berth.entities(...registryEntities);
    berth.migrations(...registryMigrations);
    berth.provide({ registries: asValue(registries), workloadRegistries: asValue(registries), registryRequests: asClass(RegistryRequests).scoped() });
    berth.procedures(...registryProcedures);
    // A server joining or leaving a swarm (the cluster plugin's events; nothing happens without that
    // plugin): a self-hosted registry on its manager makes the new node trust its CA before the join
    // answers, and takes its CA file from a node that left.
    berth.events.onDurable('serverJoinedSwarm', (joined, em) => registries.nodeJoined(joined, em));
    berth.events.onDurable('serverLeftSwarm', (left, em) => registries.nodeLeft(left, em));
  },
});
