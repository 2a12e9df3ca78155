import { asClass, asValue, definePlugin, optionalService } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { composeEntities } from './entities.ts';
import { composeMigrations } from './migrations.ts';
import { composeProcedures } from './procedures.ts';
import { ComposeService } from './service.ts';
import { ComposeDeployer } from './deployer.ts';
import { ComposeRequests } from './requests.ts';
import { ComposeKind } from './kind.ts';
import { ComposeChecks } from './check.ts';

export default definePlugin({
  name: 'compose',
  version: pkg.version,
  config,
  // Stacks live in environments and run through the deploy queue.
  dependencies: ['workloads', 'environment', 'deployment'],
  uses: ['backups', 'deploy-hook', 'domain', 'git-provider', 'mounts', 'registry', 'ssh-key'], // used when enabled (optionalService)
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const stacks = new ComposeService(
      () => cradle().secrets,
      () => cradle().environments,
      () => optionalService(cradle(), 'gitProviders'),
    );
    const deployer = new ComposeDeployer(stacks, cradle);
    berth.entities(...composeEntities);
    berth.migrations(...composeMigrations);
    cradle().workloads.register(new ComposeKind(stacks, deployer, cradle));
    berth.provide({ composeStacks: asValue(stacks), composeDeployer: asValue(deployer), composeRequests: asClass(ComposeRequests).scoped(), composeChecks: asValue(new ComposeChecks(cradle)) });
    berth.procedures(() => composeProcedures(cradle()));
  },
});

declare module '@berth/core' {
  interface Cradle {
    /** The stack records (views, env, settings, how a change applies): what compose.* builds on. */
    composeStacks: ComposeService;
    /** Runs of stacks on the engine: compose.* reads a stack's file, logs and mounts through it. */
    composeDeployer: ComposeDeployer;
  }
}
