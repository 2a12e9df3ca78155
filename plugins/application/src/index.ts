import { asClass, asValue, definePlugin, optionalService, type EntityManager } from '@berth/core';
import { forgeSources, type WorkloadRef } from '@berth/plugin-workloads';
import pkg from '../package.json' with { type: 'json' };
import { applicationEntities } from './entities.ts';
import { applicationMigrations } from './migrations.ts';
import { applicationProcedures } from './procedures.ts';
import { ApplicationService } from './service.ts';
import { ApplicationDeployer, type ApplicationVariant } from './deployer.ts';
import { Application } from './entities.ts';
import { ApplicationRequests } from './requests.ts';
import { ApplicationKind } from './kind.ts';

export default definePlugin({
  name: 'application',
  version: pkg.version,
  // Applications live in environments and run through the deploy queue.
  dependencies: ['workloads', 'environment', 'deployment'],
  uses: ['deploy-hook', 'domain', 'git-provider', 'mounts', 'port', 'preview', 'registry', 'rollback', 'ssh-key'], // used when enabled (optionalService)
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const apps = new ApplicationService(
      () => cradle().secrets,
      () => cradle().environments,
      () => optionalService(cradle(), 'gitProviders'),
    );
    const deployer = new ApplicationDeployer(apps, cradle);
    berth.entities(...applicationEntities);
    berth.migrations(...applicationMigrations);
    cradle().workloads.register(new ApplicationKind(apps, deployer, cradle));
    berth.provide({ applications: asValue(apps), applicationDeployer: asValue(deployer), applicationRequests: asClass(ApplicationRequests).scoped() });
    const variants: ApplicationVariants = {
      settings: async (applicationId, em) => {
        const row = await em.findOne(Application, { applicationId });
        const ref = row && (await apps.findRef(applicationId, em));
        return row && ref ? { ref, fields: { sourceType: row.sourceType, ...apps.settingsOf(row) } } : null;
      },
      deploy: (applicationId, variant, run) => deployer.deployVariant(applicationId, variant, run),
      remove: (applicationId, variant, em) => deployer.removeVariant(applicationId, variant, em),
    };
    berth.provide({ applicationVariants: asValue(variants) });
    // Sources and builders are providers (source.<type>, builder.<type>): the enabled ones are what the API accepts.
    const { providers } = cradle();
    berth.procedures(() => applicationProcedures({ buildTypes: providers.ids('builder'), sourceTypes: providers.ids('source'), forges: forgeSources(providers) }, cradle()));
  },
});

/** Services made from an application's source (previews): its settings, and their runs and removal. */
export interface ApplicationVariants {
  /** The application (of any organization) and its settings with its sourceType; null when it is gone. */
  settings(applicationId: string, em: EntityManager): Promise<{ ref: WorkloadRef; fields: Record<string, unknown> } | null>;
  /** Builds and rolls out the variant on the application's engine; answers its image. */
  deploy: ApplicationDeployer['deployVariant'];
  /** Removes the variant's service. */
  remove: ApplicationDeployer['removeVariant'];
}
export type { ApplicationVariant };

declare module '@berth/core' {
  interface Cradle {
    /** Services made from an application's source (the preview plugin's previews). */
    applicationVariants: ApplicationVariants;
    /** The application records (views, sealed secrets, settings, how a change applies): what application.* builds on. */
    applications: ApplicationService;
    /** Runs of applications on the engine: application.* reads a service's logs through it. */
    applicationDeployer: ApplicationDeployer;
  }
}
