// The hosts plugin: the engine layer under the workload kit. It offers `hosts` through the
// container — hosts.of(serverId | null), the local engine prepared, the one Docker error converter.
import { asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { Hosts } from './hosts.ts';

export type { ContainerHosts, EngineCalls, Host, HostServerDirectory } from './container-hosts.ts';
export { engineError, engineCall } from './engine-errors.ts';
export { ensurePlatformNetwork, DEFAULT_PLATFORM_NETWORK, PLATFORM_NETWORK_LABELS, type WorkloadExists } from './platform-network.ts';
export { KIND_LABEL, ID_LABEL, ORGANIZATION_LABEL } from './labels.ts';
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
    berth.provide({ hosts: asValue(hosts) });
    berth.http(app => {
      app.addHook('onClose', async () => hosts.close());
    });
  },
});
