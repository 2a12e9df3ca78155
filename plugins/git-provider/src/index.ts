import { asClass, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { gitProviderEntities } from './entities.ts';
import { gitProviderMigrations } from './migrations.ts';
import { forgeProcedures } from './forge-procedures.ts';
import { gitProviderProcedures } from './procedures.ts';
import { GitConnections } from './connections/common.ts';
import { ForgeConnections } from './connections/forge.ts';
import { GitProviderService } from './service.ts';
import { GitProviderSetup } from './setup.ts';
import { ProviderGitSource } from './source.ts';

export { cloneUrlOf, providerView } from './records.ts';
export { GitProviderService } from './service.ts';

export default definePlugin({
  name: 'git-provider',
  version: pkg.version,
  setup(berth) {
    const cradle = () => berth.container.cradle;
    // The git source clones for the forges' sources and reads a connection's branches (fetch, remoteHeads).
    const gitFetcher = () => cradle().providers.find('source', 'git') ?? null;
    const service = new GitProviderService({ secrets: () => cradle().secrets, providers: () => cradle().providers, gitFetcher, outbound: () => cradle().outbound });
    const setup = new GitProviderSetup(
      () => cradle().secrets,
      service,
      () => berth.config.publicUrl,
    );
    berth.entities(...gitProviderEntities);
    berth.migrations(...gitProviderMigrations);
    // The procedures' services, one per router, request-scoped: each resolves the caller and the request's transaction from the scope.
    berth.provide({ gitProviders: asValue(service), gitProviderSetup: asValue(setup), gitConnections: asClass(GitConnections).scoped(), forgeConnections: asClass(ForgeConnections).scoped() });
    berth.procedures(...gitProviderProcedures(cradle().providers.all('git')));
    // A forge that keeps its connections in the generic record (it declares `connection`) gets its router from its form.
    for (const provider of cradle().providers.all('git')) if (provider.connection) berth.procedures(...forgeProcedures(provider));
    berth.http(setup.routes(berth));
    // Each enabled git provider that names its source fields is a source type: `sourceType: github` deploys through it.
    const providers = cradle().providers;
    for (const type of providers.ids('git')) {
      const names = providers.get('git', type).sourceFields;
      if (!names || providers.has('source', type)) continue;
      berth.provide({ [`source.${type}`]: asValue(new ProviderGitSource(type, names, service, gitFetcher, () => cradle().orm.em.fork())) });
      providers.add('source', type);
    }
  },
});

declare module '@berth/core' {
  interface Cradle {
    /** gitProvider.* for the current request's caller (request scope only). */
    gitConnections: GitConnections;
    /** <forge>.* of every forge declaring its connection form. */
    forgeConnections: ForgeConnections;
  }
}
