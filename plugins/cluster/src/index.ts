// The cluster plugin: swarm.* (the nodes of a swarm and what runs on them) and cluster.* (servers
// joined to a swarm, workers drained and removed), on this machine's engine or a server's.
import { asClass, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { clusterProcedures } from './procedures.ts';
import { ClusterRequests } from './requests.ts';

export { TOKEN_PLACEHOLDER } from './swarm.ts';

export default definePlugin({
  name: 'cluster',
  version: pkg.version,
  config,
  dependencies: ['hosts', 'server'],
  setup(berth) {
    berth.provide({ clusterRequests: asClass(ClusterRequests).scoped() });
    berth.procedures(...clusterProcedures);
  },
});
