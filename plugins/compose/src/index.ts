import { asClass, asValue, definePlugin, optionalService } from '@berth/core';
import { forgeSources } from '@berth/plugin-workloads';
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
import { stackFields } from './fields.ts';
import { composeSchemas } from './schemas.ts';

export default definePlugin({
  name: 'compose',
  version: pkg.version,
  config,
  // Stacks live in environments and run through the deploy queue.
  dependencies: ['workloads', 'environment', 'deployment'],
  uses: ['backups', 'deploy-hook', 'domain', 'git-provider', 'mounts', 'registry', 'ssh-key'], // used when enabled (optionalService)
  setup(berth) {
    const cradle = () => berth.container.cradle;
    // Its source types are a git URL, a stored file and the enabled forges (providers are loaded before plugins).
    const forges = forgeSources(cradle().providers);
    const fields = stackFields(forges);
    const schemas = composeSchemas(fields);
    const stacks = new ComposeService(
      fields,
      () => cradle().secrets,
      () => cradle().environments,
      () => optionalService(cradle(), 'gitProviders'),
    );
    const deployer = new ComposeDeployer(stacks, cradle);
    berth.entities(...composeEntities);
    berth.migrations(...composeMigrations);
    cradle().workloads.register(new ComposeKind(stacks, deployer, cradle, schemas.ComposeFields));
    berth.provide({ composeStacks: asValue(stacks), composeDeployer: asValue(deployer), composeRequests: asClass(ComposeRequests).scoped(), composeChecks: asValue(new ComposeChecks(cradle)) });
    berth.procedures(() => composeProcedures({ forges, schemas }, cradle()));
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
