import { asFunction, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { applicationEntities } from './entities.ts';
import { applicationMigrations } from './migrations.ts';
import { applicationProcedures } from './procedures.ts';
import { ApplicationService } from './service.ts';
import { ApplicationDeployer } from './deployer.ts';
import { ApplicationPipeline, callerApplications } from './pipeline.ts';
import { ApplicationKind } from './kind.ts';
import { DockerfileBuilder } from '@berth/builder-dockerfile';
import { StaticBuilder } from '@berth/builder-static';
import { ProgramBuilder, programBuildTypes } from '@berth/builder-programs';
import { GitFetcher } from '@berth/source-git';
import path from 'node:path';

export default definePlugin({
  name: 'application',
  version: pkg.version,
  // Applications live in environments and run through the deploy queue.
  dependencies: ['workloads', 'environment', 'deployment'],
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const apps = new ApplicationService(() => cradle().secrets, () => cradle().environments);
    const deployer = new ApplicationDeployer(apps, cradle);
    const pipeline = new ApplicationPipeline(apps, deployer, cradle);
    berth.entities(...applicationEntities);
    berth.migrations(...applicationMigrations);
    cradle().workloads.register(new ApplicationKind(apps, deployer, cradle));
    // The builders applications use; the registry is shared, so compose stacks find them too.
    const builders = cradle().builders;
    builders.addBuilder(new DockerfileBuilder());
    builders.addBuilder(new StaticBuilder({ image: berth.config.staticImage, root: berth.config.staticRoot }));
    for (const type of programBuildTypes) builders.addBuilder(new ProgramBuilder(type));
    // Hosts first seen over SSH are remembered in Berth's own known_hosts, not the user's.
    builders.addFetcher(new GitFetcher({ knownHostsFile: path.resolve(berth.config.dataDir, 'ssh', 'known_hosts') }));
    berth.provide({ callerApplications: asFunction(callerApplications(apps, pipeline)).scoped() });
    berth.procedures(() => applicationProcedures(cradle()));
  },
});
