import { asFunction, asValue, definePlugin } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { gitProviderEntities } from './entities.ts';
import { gitProviderMigrations } from './migrations.ts';
import { gitProviderProcedures } from './procedures.ts';
import { callerGitProviders, GitProviderService } from './service.ts';
import { GitProviderSetup } from './setup.ts';
import { ProviderGitSource } from './source.ts';

export { cloneUrlOf, githubRowView, providerView, GitProviderService } from './service.ts';

export default definePlugin({
  name: 'git-provider',
  version: pkg.version,
  setup(berth) {
    const cradle = () => berth.container.cradle;
    // cast: the git source provider's own type (a fetcher) is not among the kernel's contract types.
    const gitFetcher = () => (cradle().providers.has('source', 'git') ? (cradle().providers.get('source', 'git') as never) : null);
    const service = new GitProviderService({ secrets: () => cradle().secrets, providers: () => cradle().providers, gitFetcher, outbound: () => cradle().outbound });
    const setup = new GitProviderSetup(
      () => cradle().secrets,
      service,
      () => berth.config.publicUrl,
    );
    berth.entities(...gitProviderEntities);
    berth.migrations(...gitProviderMigrations);
    berth.provide({ gitProviders: asValue(service), gitProviderSetup: asValue(setup), callerGitProviders: asFunction(callerGitProviders(service)).scoped() });
    berth.procedures(...gitProviderProcedures);
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
