// The cluster plugin's configuration keys (section "cluster").
import { Type, type Static } from '@berth/core';

export const ClusterConfig = Type.Object({
  drainTimeoutSeconds: Type.Integer({
    env: 'BERTH_DRAIN_TIMEOUT_SECONDS',
    minimum: 5,
    maximum: 3600,
    default: 300,
    description: "How long cluster.removeWorker waits for a drained node's tasks to run elsewhere before it gives up (the node then stays, drained)",
  }),
});
export default ClusterConfig;
export type ClusterSettings = Static<typeof ClusterConfig>;

declare module '@berth/core' {
  interface BerthConfig extends ClusterSettings {}
}
