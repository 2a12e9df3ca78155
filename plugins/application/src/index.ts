import { asFunction, definePlugin, optionalService } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { applicationEntities } from './entities.ts';
import { applicationMigrations } from './migrations.ts';
import { applicationProcedures } from './procedures.ts';
import { ApplicationService } from './service.ts';
import { ApplicationDeployer } from './deployer.ts';
import { ApplicationPipeline, callerApplications } from './pipeline.ts';
import { ApplicationKind } from './kind.ts';

export default definePlugin({
  name: 'application',
  version: pkg.version,
  // Applications live in environments and run through the deploy queue.
  dependencies: ['workloads', 'environment', 'deployment'],
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const apps = new ApplicationService(
      () => cradle().secrets,
      () => cradle().environments,
      () => optionalService(cradle(), 'gitProviders'),
      async (key, id, organizationId, em) => {
        if (key === 'customGitSSHKeyId') await optionalService(cradle(), 'sshKeys')?.one(id, organizationId, em);
        else if (key === 'buildServerId') await cradle().workloads.assertServer(id, organizationId);
        else await optionalService(cradle(), 'registries')?.one(id, organizationId, em);
      },
    );
    const deployer = new ApplicationDeployer(apps, cradle);
    const pipeline = new ApplicationPipeline(apps, deployer, cradle);
    berth.entities(...applicationEntities);
    berth.migrations(...applicationMigrations);
    cradle().workloads.register(new ApplicationKind(apps, deployer, cradle));
    berth.provide({ callerApplications: asFunction(callerApplications(apps, pipeline)).scoped() });
    // Sources and builders are providers (source.<type>, builder.<type>): the enabled ones are what the API accepts.
    const { providers } = cradle();
    berth.procedures(() => applicationProcedures({ buildTypes: providers.ids('builder'), sourceTypes: providers.ids('source') }, cradle()));
  },
});
