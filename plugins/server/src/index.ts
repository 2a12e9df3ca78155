// The server plugin: server.* records, offered to the hosts plugin as `hostServers` (hosts.of
// connects with a record's details) and to the workload kit as `workloadServers` (the server a
// workload names), the check that refuses a deploy to an inactive server, and
// the reachability probe.
import { asClass, asValue, definePlugin, optionalService, Type } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { serverEntities } from './entities.ts';
import { serverMigrations } from './migrations.ts';
import { ServerProbe } from './probe.ts';
import { serverProcedures } from './procedures.ts';
import { ServerRequests } from './requests.ts';
import { ServerService } from './service.ts';
import { ServerOperationRequests } from './setup-requests.ts';
import { ServerSetup } from './setup.ts';
import { serverSetupProcedures } from './setup-procedures.ts';
import { setupHostCommand } from './setup-host-command.ts';

export { ServerProbe, PROBE_JOB, UNREACHABLE_AFTER } from './probe.ts';
export type { ServerService, WorkloadOnServer } from './service.ts';

export default definePlugin({
  name: 'server',
  version: pkg.version,
  config,
  dependencies: ['ssh-key', 'hosts'],
  uses: ['deployment', 'domain', 'schedule', 'workloads'], // used when enabled (optionalService)
  commands: [setupHostCommand],
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const servers = new ServerService(cradle);
    const probe = new ServerProbe(cradle, berth.config.serverProbeSeconds);
    berth.entities(...serverEntities);
    berth.migrations(...serverMigrations);
    berth.provide({ servers: asValue(servers), hostServers: asValue(servers), workloadServers: asValue(servers), serverProbe: asValue(probe), serverRequests: asClass(ServerRequests).scoped() });
    const deploymentView = () => optionalService(cradle(), 'deployments')?.viewSchema() ?? Type.Object({});
    const setup = new ServerSetup(cradle);
    berth.provide({ serverSetup: asValue(setup), serverOperationRequests: asClass(ServerOperationRequests).scoped() });
    berth.procedures(serverProcedures(deploymentView), ...serverSetupProcedures);
    probe.define(berth.jobs, berth.config.jobs);
    berth.onStart(() => {
      const deployments = optionalService(cradle(), 'deployments');
      deployments?.checkBeforeEnqueue((request, em) => servers.checkDeployable(request, em));
      deployments?.limitPerServer(em => servers.buildLimits(em));
      deployments?.register(setup);
    });
  },
});

declare module '@berth/core' {
  interface Cradle {
    /** The reachability probe of the servers; from the server plugin. */
    serverProbe: ServerProbe;
  }
}
