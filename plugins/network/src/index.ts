// The network plugin: network.*, an organization's own bridge and overlay networks on this machine
// or its servers, owned by labels like every engine object Berth makes; offered to the workloads
// that join them (networkIds, compose's serviceNetworks) as `userNetworks`.
import { asClass, asValue, definePlugin, optionalService } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { networkEntities } from './entities.ts';
import { networkMigrations } from './migrations.ts';
import { networkProcedures } from './procedures.ts';
import { NetworkRequests } from './requests.ts';
import { NetworkService } from './service.ts';

export default definePlugin({
  name: 'network',
  version: pkg.version,
  dependencies: ['hosts'],
  uses: ['organization', 'server'], // organization removal; the server records hostServers reads
  setup(berth) {
    const networks = new NetworkService(() => berth.container.cradle, berth.container.cradle.logger);
    berth.entities(...networkEntities);
    berth.migrations(...networkMigrations);
    berth.provide({ networks: asValue(networks), userNetworks: asValue(networks), networkRequests: asClass(NetworkRequests).scoped() });
    berth.procedures(...networkProcedures);
    // An organization's rows cascade through their foreign key; its networks go from their hosts first.
    berth.onStart(cradle => {
      optionalService(cradle, 'organizations')?.beforeRemove((organizationId, em) => networks.removeOfOrganization(organizationId, em));
    });
    // Once it is gone (a test server's teardown says so too): this machine's networks still labelled with it go.
    berth.events.onDurable('organizationRemoved', ({ organizationId }) =>
      networks
        .sweepThisMachine(organizationId)
        .catch((err: unknown) => berth.container.cradle.logger.warn({ err, organizationId }, "a removed organization's networks were not swept from this machine")),
    );
  },
});
