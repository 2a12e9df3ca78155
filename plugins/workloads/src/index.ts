// The workload kit as a plugin: it offers the registry of workload kinds and the host's published
// ports through the container, on the hosts plugin's engines; the kinds (application, the
// database kinds, a third party's) build on it and register themselves.
import { asClass, asValue, definePlugin, type EntityManager } from '@berth/core';
import { HostAccess } from './host-access-policy.ts';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { HostPorts } from './host-ports.ts';
import { WorkloadRegistry } from './registry.ts';
import { adoptServices } from './adoption.ts';

export * from './kit.ts';

export default definePlugin({
  name: 'workloads',
  version: pkg.version,
  config,
  dependencies: ['hosts'],
  setup(berth) {
    const { cradle } = berth.container;
    const workloads = new WorkloadRegistry({ cradle: () => berth.container.cradle });
    const { hosts } = cradle;
    // Services made before owner labels are adopted when the engine is first used, not at boot
    // (the checks compare berth.id, which they carry already; only the organization label is added).
    hosts.afterReady(async () => void (await adoptServices(workloads, hosts, berth.container.cradle.orm.em.fork(), cradle.logger)));
    // A workload's move (<kind>.move) names the environment it goes to: a member given records one by one needs that one too.
    berth.recordOwners({ targetEnvironmentId: { what: 'Environment', owner: async id => ({ kind: 'environments', id }) } });
    berth.provide({ workloads: asValue(workloads), hostPorts: asValue(new HostPorts()), hostAccess: asClass(HostAccess).singleton() });
    // A changed platformNetwork is refused at boot while this instance's workloads sit on the former one.
    berth.onStart(async ({ orm }) => hosts.checkNetworkAtBoot(async (kind, id, em) => Boolean(await workloads.kind(kind)?.find(id, em)), orm.em.fork() as EntityManager));
  },
});
