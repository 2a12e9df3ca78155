// The cluster plugin: swarm.* (the nodes of a swarm and what runs on them) and cluster.* (servers
// joined to a swarm, workers drained and removed), on this machine's engine or a server's.
import { asFunction, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { clusterProcedures } from './procedures.ts';
import { callerCluster, ClusterService } from './service.ts';

export { TOKEN_PLACEHOLDER } from './service.ts';

export default definePlugin({
  name: 'cluster',
  version: pkg.version,
  config,
  dependencies: ['hosts', 'server'],
  setup(berth) {
    const cluster = new ClusterService(() => berth.container.cradle, berth.config.drainTimeoutSeconds * 1000);
    berth.provide({ callerCluster: asFunction(callerCluster(cluster)).scoped() });
    berth.procedures(...clusterProcedures);
  },
});
