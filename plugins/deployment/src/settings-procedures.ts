// The peer's settings.* about the deploy queue: this machine's concurrency and servers-only switch
// (its operators'), and cleanAllDeploymentQueue (an organization's admins: its own waiting
// deployments, never another organization's).
import { Type, router } from '@berth/core';

const settings = router('settings', 'instance');

/** wake: the dispatcher, so a raised limit starts what waits at once. */
export const queueSettingsProcedures = (wake: () => Promise<void>) => [
  settings.mutation('updateBuildsConcurrency', {
    permission: 'organization.update',
    access: 'admin',
    summary:
      "How many deployments run at once on Berth's own machine (1 to 100; the peer's web-server buildsConcurrency): the queue reads it at every start, so it applies to the next deployment that starts. A server's own limit is server.updateBuildsConcurrency",
    input: Type.Object({ buildsConcurrency: Type.Integer({ minimum: 1, maximum: 100 }) }),
    output: Type.Boolean(),
    handler: async ({ buildsConcurrency }, ctx) => {
      await ctx.cradle.queueSettings.update({ buildsConcurrency }, ctx.cradle.em);
      await wake();
      return true;
    },
  }),
  settings.mutation('updateRemoteServersOnly', {
    permission: 'organization.update',
    access: 'admin',
    summary:
      "Whether workloads deploy to servers only: while on, a workload's deployment on Berth's own machine is refused (409) before it is queued; host care (cleanups, a server's setup) still runs here",
    input: Type.Object({ remoteServersOnly: Type.Boolean() }),
    output: Type.Boolean(),
    handler: async ({ remoteServersOnly }, ctx) => {
      await ctx.cradle.queueSettings.update({ remoteServersOnly }, ctx.cradle.em);
      return true;
    },
  }),
  settings.mutation('cleanAllDeploymentQueue', {
    permission: 'organization.update',
    scope: 'organization',
    access: 'admin',
    summary: "Cancel the organization's deployments still waiting their turn in the queue (each ends cancelled); those already running go on (deployment.killProcess stops one)",
    input: Type.Object({}),
    output: Type.Boolean(),
    handler: async (_input, ctx) => {
      await ctx.cradle.queueSettings.cancelQueued(ctx.principal.organizationId, ctx.cradle.em);
      return true;
    },
  }),
];
