// Preview deployments: pull request events on an application's push hook (the deploy-hook
// plugin) deploy the pull request's branch as a service of its own (the application plugin's
// variants) at a domain of the domain plugin's; previewDeployment.* as the peer's; a daily job
// removes previews older than previewMaxAgeDays.
import { asValue, definePlugin, optionalService, ownerColumn, PreviewDeploymentFields, router, schema, Type } from '@berth/core';
import { runProcedure } from '@berth/plugin-workloads';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { PreviewDeployment, previewEntities } from './entities.ts';
import { previewMigrations } from './migrations.ts';
import { PreviewService, TARGET } from './service.ts';

const EXPIRY_JOB = 'preview.expire';
const Nullable = schema.Nullable;

const PreviewView = PreviewDeploymentFields;

export default definePlugin({
  name: 'preview',
  version: pkg.version,
  config,
  dependencies: ['application', 'deploy-hook', 'deployment', 'workloads'], // kind-names: previews are made from applications, the plugin's dependency
  uses: ['domain', 'git-provider'], // used when enabled (optionalService)
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const previews = new PreviewService(berth.config, cradle);
    berth.entities(...previewEntities);
    berth.migrations(...previewMigrations);
    // A member given some services reaches a preview (and domain.create's previewDeploymentId) through its application.
    berth.recordOwners({ previewDeploymentId: { what: 'Preview deployment', owner: ownerColumn(PreviewDeployment, 'previewDeploymentId', 'applicationId') } });
    berth.provide({ previews: asValue(previews) });
    cradle().deployments.register(previews.deployer);
    cradle().deployHooks.onPullRequest('application', (target, pr, _delivery, em) => previews.onPullRequest(target, pr, em)); // kind-names: previews are the application kind's
    // A preview's domain changed through domain.update or domain.delete has its routes applied at once.
    berth.onStart(c => optionalService(c, 'domains')?.ownsAttached?.(TARGET, (id, em) => previews.ownerOf(id, em)));
    berth.jobs.define(EXPIRY_JOB, async () => void (await previews.expire(cradle().orm.em.fork())));
    if (berth.config.jobs) berth.jobs.every('1 day', EXPIRY_JOB);

    const deploymentView = () => cradle().deployments.viewSchema();
    const domainView = () => cradle().domains?.viewSchemas().domains ?? Type.Object({});
    const Joined = () => Type.Object({ ...PreviewView.properties, deployments: Type.Array(deploymentView(), { description: 'its deployments, newest first' }), domain: Nullable(domainView()) });
    const ns = router('previewDeployment', 'organization');
    const Id = Type.Object({ previewDeploymentId: Type.String({ minLength: 1, maxLength: 255 }) });
    berth.procedures(() => [
      ns.query('all', {
        permission: 'deployment.read',
        summary: "The application's previews, newest first, each with its deployments and domain",
        input: Type.Object({ applicationId: Type.String({ minLength: 1, maxLength: 255 }) }),
        output: Type.Array(Joined()),
        handler: ({ applicationId }, ctx) => previews.all(applicationId, ctx.principal.organizationId, ctx.cradle.em),
      }),
      ns.query('one', {
        permission: 'deployment.read',
        summary: 'A preview with its deployments and domain',
        input: Id,
        output: Joined(),
        handler: ({ previewDeploymentId }, ctx) => previews.one(previewDeploymentId, ctx.principal.organizationId, ctx.cradle.em),
      }),
      ns.mutation('delete', {
        permission: 'deployment.cancel',
        summary: 'Remove a preview: its service, domain and routes, deployments and record',
        input: Id,
        output: Type.Boolean(),
        handler: ({ previewDeploymentId }, ctx) => previews.delete(previewDeploymentId, ctx.principal.organizationId, ctx.cradle.em),
      }),
      runProcedure(ns, 'redeploy', {
        summary: "Queue a rebuild of the preview from its pull request's branch",
        input: Type.Object({
          previewDeploymentId: Type.String({ minLength: 1, maxLength: 255 }),
          title: Type.Optional(Type.String({ maxLength: 255 })),
          description: Type.Optional(Type.String({ maxLength: 1000 })),
        }),
        output: Type.Boolean(),
        answer: () => true,
        queue: (input, ctx) => previews.redeploy(input, ctx.principal.organizationId, ctx.cradle.em),
      }),
    ]);
  },
});

declare module '@berth/core' {
  interface Cradle {
    /** Preview deployments (the preview plugin). */
    previews: PreviewService;
  }
}
