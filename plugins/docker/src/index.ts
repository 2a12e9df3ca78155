// The docker plugin: docker.*, the containers of this machine or of a server of the organization,
// through the hosts plugin's engines (hosts.of(serverId)).
import { asClass, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { dockerProcedures } from './procedures.ts';
import { DockerRequests } from './requests.ts';

export default definePlugin({
  name: 'docker',
  version: pkg.version,
  dependencies: ['hosts'],
  uses: ['server'], // the server records hostServers reads (a serverId's organization)
  setup(berth) {
    berth.provide({ dockerRequests: asClass(DockerRequests).scoped() });
    berth.procedures(...dockerProcedures);
  },
});
