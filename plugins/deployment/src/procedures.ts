// deployment.* — the deployments of the caller's organization: lists per target, one record,
// its log, stopping and removing one. The live log is a raw route (stream.ts).
import { Type, router, type ProcedureContext } from '@berth/core';
import type { DeploymentStore } from './service.ts';
import { ApplicationIdInput, ComposeIdInput, DeploymentIdInput, LogText, ReadLogsInput, ServerIdInput, deploymentSchemas } from './schemas.ts';

const deployment = router('deployment');
const scope = (ctx: ProcedureContext) => ({ organizationId: ctx.principal.organizationId, em: ctx.cradle.em });

/** Made once every plugin is set up: the target types are the registered ones. */
export const deploymentProcedures = (store: DeploymentStore) => () => {
  const { DeploymentView, ByTypeInput } = deploymentSchemas(store.targets());
  const Deployments = Type.Array(DeploymentView);
  return [
  deployment.query('all', {
    summary: 'An application\'s deployments, newest first',
    input: ApplicationIdInput,
    output: Deployments,
    handler({ applicationId }, ctx) {
      const { organizationId, em } = scope(ctx);
      return store.forIdField('applicationId', applicationId, organizationId, em);
    },
  }),
  deployment.query('allByCompose', {
    summary: 'A compose stack\'s deployments, newest first',
    input: ComposeIdInput,
    output: Deployments,
    handler({ composeId }, ctx) {
      const { organizationId, em } = scope(ctx);
      return store.forIdField('composeId', composeId, organizationId, em);
    },
  }),
  deployment.query('allByServer', {
    summary: 'A server\'s own deployments (its setup runs), newest first',
    input: ServerIdInput,
    output: Deployments,
    handler({ serverId }, ctx) {
      const { organizationId, em } = scope(ctx);
      return store.forTarget('server', serverId, organizationId, em);
    },
  }),
  deployment.query('allByType', {
    summary: 'The deployments of one target of the given type, newest first',
    input: ByTypeInput,
    output: Deployments,
    handler({ id, type }, ctx) {
      const { organizationId, em } = scope(ctx);
      return store.forTarget(type, id, organizationId, em);
    },
  }),
  deployment.query('allCentralized', {
    summary: 'The organization\'s latest deployments of every target (at most 500), newest first',
    input: Type.Object({}),
    output: Deployments,
    handler(_input, ctx) {
      const { organizationId, em } = scope(ctx);
      return store.all(organizationId, em);
    },
  }),
  deployment.query('queueList', {
    summary: 'The organization\'s running and queued deployments, in the order they run',
    input: Type.Object({}),
    output: Deployments,
    handler(_input, ctx) {
      const { organizationId, em } = scope(ctx);
      return store.queue(organizationId, em);
    },
  }),
  deployment.query('one', {
    summary: 'One deployment',
    input: DeploymentIdInput,
    output: DeploymentView,
    handler({ deploymentId }, ctx) {
      const { organizationId, em } = scope(ctx);
      return store.one(deploymentId, organizationId, em);
    },
  }),
  deployment.query('readLogs', {
    summary: 'The last lines of a deployment\'s log (follow it live at GET /api/deployment.logs/stream?deploymentId=…)',
    input: ReadLogsInput,
    output: LogText,
    handler({ deploymentId, tail }, ctx) {
      const { organizationId, em } = scope(ctx);
      return store.readLogs(deploymentId, organizationId, tail ?? 100, em);
    },
  }),
  deployment.mutation('killProcess', {
    summary: 'Stop a running (or queued) deployment: it ends cancelled; a finished one is a 400',
    input: DeploymentIdInput,
    output: DeploymentView,
    handler({ deploymentId }, ctx) {
      const { organizationId, em } = scope(ctx);
      return store.kill(deploymentId, organizationId, em);
    },
  }),
  deployment.mutation('removeDeployment', {
    summary: 'Delete a finished deployment and its log; answers it as it was',
    input: DeploymentIdInput,
    output: DeploymentView,
    handler({ deploymentId }, ctx) {
      const { organizationId, em } = scope(ctx);
      return store.remove(deploymentId, organizationId, em);
    },
  }),
];
};
