// The hosts plugin's configuration keys (section "hosts"): how the local engine is prepared (the
// address swarm mode advertises) and the platform network every workload and the proxy join.
// Other plugins read them from the configuration in the container, never from this file.
import { Type, type Static } from '@berth/core';

export const HostsConfig = Type.Object({
  swarmAdvertiseAddr: Type.Optional(
    Type.String({
      env: 'BERTH_SWARM_ADVERTISE_ADDR',
      minLength: 1,
      description: 'Address the local engine advertises when Berth initialises swarm mode; unset: the address of the interface that carries the default route (127.0.0.1 only when there is none)',
    }),
  ),
  platformNetwork: Type.String({
    env: 'BERTH_PLATFORM_NETWORK',
    pattern: '^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$',
    default: 'berth-network',
    description: "The overlay network every workload and the proxy join (the peer's is dokploy-network); changing it on an instance with workloads is refused at boot",
  }),
});
export default HostsConfig;
export type HostsSettings = Static<typeof HostsConfig>;

declare module '@berth/core' {
  interface BerthConfig extends HostsSettings {}
}
