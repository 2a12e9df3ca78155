import { asClass, asValue, definePlugin, EnvironmentView, optionalService } from '@berth/core';
import type {} from '@berth/plugin-workloads';
import pkg from '../package.json' with { type: 'json' };
import { projectEntities } from './entities.ts';
import { projectMigrations } from './migrations.ts';
import { projectProcedures } from './procedures.ts';
import { ProjectRequests } from './requests.ts';
import { ProjectService } from './service.ts';

export default definePlugin({
  name: 'project',
  version: pkg.version,
  uses: ['workloads', 'tag'], // used when enabled (optionalService)
  setup(berth) {
    const projects = new ProjectService(() => berth.container.cradle.secrets);
    berth.entities(...projectEntities);
    berth.migrations(...projectMigrations);
    // project.duplicate copies the source environment's whole project: a member given records one by one needs that environment.
    berth.recordOwners({ sourceEnvironmentId: { what: 'Environment', owner: async id => ({ kind: 'environments', id }) } });
    berth.provide({ projects: asValue(projects), projectRequests: asClass(ProjectRequests).scoped() });
    const cradle = () => berth.container.cradle;
    // Without the environment plugin the kernel refuses to start (below); the schemas must still be made.
    berth.procedures(
      projectProcedures({
        environmentView: () => optionalService(cradle(), 'environments')?.viewSchema() ?? EnvironmentView,
        kinds: () =>
          optionalService(cradle(), 'workloads')
            ?.kinds()
            .map(k => k.kind) ?? [],
        // A kind whose backups are of itself (no backupType of their own) is a database.
        databaseLists: () =>
          new Set(
            optionalService(cradle(), 'workloads')
              ?.kinds()
              .filter(k => k.backups && !k.backups.backupType)
              .map(k => k.listKey) ?? [],
          ),
      }),
    );
    // Every project gets a default environment, so a kernel without the environment plugin
    // could not create one: refuse to start instead of failing on the first request.
    berth.onStart(async ({ orm, logger }) => {
      if (!berth.container.hasRegistration('environments')) throw new Error('The project plugin needs the environment plugin (it stores every project\'s environments): enable "environment"');
      const sealed = await projects.sealStoredEnv(orm.em.fork());
      if (sealed) logger.info({ projects: sealed }, 'sealed the env of projects stored before env was sealed');
    });
  },
});
