// The hosts plugin: the engine layer under the workload kit. It offers `hosts` through the
// container — hosts.of(serverId | null), the local engine prepared, the one Docker error converter —
// and each organization's default SSH key (settings.saveSSHPrivateKey / cleanSSHPrivateKey).
import { asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { hostsEntities } from './entities.ts';
import { Hosts } from './hosts.ts';
import { hostsMigrations } from './migrations.ts';
import { hostsProcedures } from './procedures.ts';

export type { ContainerHosts, DirectoryServer, EngineCalls, Host, HostServerDirectory, NetworkJoiner, UserNetworkDirectory } from './container-hosts.ts';
export { checkedPrivateKey, type DefaultSshKeys } from './default-key.ts';
export { engineError, engineCall } from './engine-errors.ts';
export { ensurePlatformNetwork, DEFAULT_PLATFORM_NETWORK, PLATFORM_NETWORK_LABELS, type WorkloadExists } from './platform-network.ts';
export { ORGANIZATION_NETWORK_KIND, ORGANIZATION_NETWORK_PREFIX, organizationNetworkName } from './organization-network.ts';
export { KIND_LABEL, ID_LABEL, ORGANIZATION_LABEL } from './labels.ts';
export {
  ORGANIZATION_NODE_LABEL,
  SHARED_NODE_LABEL,
  organizationConstraint,
  organizationNodeLabel,
  onlyOrganizationLabels,
  ownedNode,
  relabelNode,
  sharedLabels,
  updateNode,
  withOrganizationConstraint,
} from './node-labels.ts';
export { localRouteAddress } from './route-address.ts';
export { HostsConfig, type HostsSettings } from './config.ts';
export { Hosts };

export default definePlugin({
  name: 'hosts',
  version: pkg.version,
  config,
  setup(berth) {
    const { cradle } = berth.container;
    const hosts = new Hosts({ cradle: () => berth.container.cradle, logger: cradle.logger, config: berth.config });
    berth.entities(...hostsEntities);
    berth.migrations(...hostsMigrations);
    berth.provide({ hosts: asValue(hosts) });
    berth.procedures(...hostsProcedures);
    // Placement by ownership: this machine's shared nodes carry every organization's label.
    berth.events.on('organizationCreated', ({ organizationId }) => hosts.organizationAdded(organizationId));
    // Awaited by emitDurable (a test server's teardown takes its organizations' labels off the engine it shares); never the deletion's failure.
    berth.events.onDurable('organizationRemoved', ({ organizationId }) =>
      hosts
        .organizationRemoved(organizationId)
        .catch((err: unknown) => cradle.logger.warn({ err, organizationId }, "an organization's placement label was not removed from this machine's swarm nodes")),
    );
    berth.http(app => {
      app.addHook('onClose', async () => hosts.close());
    });
  },
});
