import { asClass, asValue, definePlugin, optionalService } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import { environmentEntities } from './entities.ts';
import { environmentMigrations } from './migrations.ts';
import { environmentProcedures } from './procedures.ts';
import { EnvironmentRequests } from './requests.ts';
import { EnvironmentService } from './service.ts';

export default definePlugin({
  name: 'environment',
  version: pkg.version,
  dependencies: ['project', 'workloads'],
  uses: ['organization'], // used when enabled (optionalService)
  setup(berth) {
    const environments = new EnvironmentService(berth.container.cradle.workloads, () => berth.container.cradle.secrets);
    berth.entities(...environmentEntities);
    berth.migrations(...environmentMigrations);
    berth.provide({ environments: asValue(environments), environmentRequests: asClass(EnvironmentRequests).scoped() });
    berth.procedures(environmentProcedures(environments));
    // An organization's rows go through foreign keys; its services, files and ports go through the kinds, first.
    // Without the organization plugin nothing deletes an organization.
    berth.onStart(async cradle => {
      optionalService(cradle, 'organizations')?.beforeRemove((organizationId, em) => environments.removeWorkloadsOfOrganization(organizationId, em));
      const { orm, logger } = cradle;
      const sealed = await environments.sealStoredEnv(orm.em.fork());
      if (sealed) logger.info({ environments: sealed }, 'sealed the env of environments stored before env was sealed');
    });
  },
});
