import { asClass, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { Deployment, deploymentEntities } from './entities.ts';
import { deploymentMigrations } from './migrations.ts';
import { deploymentProcedures } from './procedures.ts';
import { DeploymentQueue } from './queue.ts';
import { QueueSettingsService } from './queue-settings.ts';
import { DeploymentRequests } from './requests.ts';
import { DeploymentStore } from './service.ts';
import { queueSettingsProcedures } from './settings-procedures.ts';
import { registerLogStream } from './stream.ts';

export default definePlugin({
  name: 'deployment',
  version: pkg.version,
  config,
  dependencies: ['workloads'],
  uses: ['server', 'rollback'], // used when enabled (optionalService): allCentralized joins the servers a deployment ran and built on; allByType the releases kept to roll back to
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const store: DeploymentStore = new DeploymentStore(berth.config, berth.container.cradle.workloads, () => queue);
    const queueSettings = new QueueSettingsService({ defaultLimit: () => berth.config.deployConcurrency, workloads: berth.container.cradle.workloads });
    const queue = new DeploymentQueue({
      config: berth.config,
      jobs: berth.jobs,
      events: berth.events,
      orm: () => cradle().orm,
      logger: () => cradle().logger,
      deployer: type => store.deployer(type),
      serverLimits: em => store.serverLimits(em),
      localLimit: em => queueSettings.localLimit(em),
    });
    store.checkBeforeEnqueue((request, em) => queueSettings.checkEnqueue(request, em));
    queue.define();
    berth.entities(...deploymentEntities);
    berth.migrations(...deploymentMigrations);
    // A member given some services reaches a deployment through what it ran: a workload, or a record
    // of one (a backup, a schedule, a preview…) whose own owner decides; a server's, the server (accessedServers).
    berth.recordOwners({
      deploymentId: {
        what: 'Deployment',
        owner: async (deploymentId, { em, organizationId, ownerOf }) => {
          const row = await em.findOne(Deployment, { deploymentId, organizationId });
          const idField = row && store.targets().find(t => t.type === row.targetType)?.idField;
          return idField ? ownerOf(idField, row.targetId) : null;
        },
      },
    });
    berth.provide({
      deployments: asValue(store),
      deploymentStore: asValue(store),
      workloadDeployments: asValue(store),
      deploymentRequests: asClass(DeploymentRequests).scoped(),
      queueSettings: asValue(queueSettings),
    });
    berth.procedures(deploymentProcedures(store), ...queueSettingsProcedures(() => queue.wake()));
    registerLogStream(berth, store);
    berth.http(app => {
      // A graceful stop ends what runs here with a reason, while the database is still open.
      app.addHook('onClose', async () => queue.shutdown());
    });
    // Deployers register in their plugins' setup, so by now each running record has its own.
    berth.onStart(async ({ orm }) => {
      orm.em.getEventManager().registerSubscriber({
        afterTransactionCommit: args => {
          if (args.transaction) store.onCommit(args.transaction);
        },
      });
      if (!berth.config.jobs) return;
      const recovered = await queue.recover();
      if (recovered) cradle().logger.warn({ deployments: recovered }, 'deployments interrupted by the last stop marked error');
      await queue.wake();
    });
  },
});
