// deployment.* — the deployments of the caller's organization: lists per target, one record,
// its log, stopping and removing one. The live log is a raw route (stream.ts).
import { Type, router, schema } from '@berth/core';
import type { DeploymentStore } from './service.ts';
import { ApplicationIdInput, ComposeIdInput, DeploymentIdInput, DeploymentRollback, LogText, ReadLogsInput, ServerIdInput, deploymentSchemas } from './schemas.ts';

const { Nullable } = schema;
const deployment = router('deployment', 'organization');

/** Made once every plugin is set up: the target types are the registered ones. */
export const deploymentProcedures = (store: DeploymentStore) => () => {
  const { DeploymentView, ByTypeInput } = deploymentSchemas(store.targets());
  const Deployments = Type.Array(DeploymentView);
  const { CentralizedDeployment, QueueJob } = store.centralizedSchemas();
  return [
    deployment.query('all', {
      permission: 'deployment.read',
      summary: "An application's deployments, newest first",
      input: ApplicationIdInput,
      output: Deployments,
      handler: ({ applicationId }, ctx) => ctx.cradle.deploymentRequests.forIdField('applicationId', applicationId),
    }),
    deployment.query('allByCompose', {
      permission: 'deployment.read',
      summary: "A compose stack's deployments, newest first",
      input: ComposeIdInput,
      output: Deployments,
      handler: ({ composeId }, ctx) => ctx.cradle.deploymentRequests.forIdField('composeId', composeId),
    }),
    deployment.query('allByServer', {
      permission: 'deployment.read',
      summary: "A server's own deployments (its setup runs), newest first",
      input: ServerIdInput,
      output: Deployments,
      handler: ({ serverId }, ctx) => ctx.cradle.deploymentRequests.forTarget('server', serverId),
    }),
    deployment.query('allByType', {
      permission: 'deployment.read',
      summary: 'The deployments of one target of the given type, newest first, each with the release it made when that is kept to roll back to (else null)',
      input: ByTypeInput,
      output: Type.Array(Type.Object({ ...DeploymentView.properties, rollback: Nullable(DeploymentRollback) })),
      handler: ({ id, type }, ctx) => ctx.cradle.deploymentRequests.forTargetWithReleases(type, id),
    }),
    deployment.query('allCentralized', {
      permission: 'deployment.read',
      summary: "The organization's latest deployments of every target (at most 500), newest first, each with its workload (under its kind's name), environment and project",
      input: Type.Object({}),
      output: Type.Array(CentralizedDeployment),
      handler: (_input, ctx) => ctx.cradle.deploymentRequests.all(),
    }),
    deployment.query('queueList', {
      permission: 'deployment.read',
      summary: "The organization's running (active) and queued (waiting) deployments as the peer's queue jobs, newest first, with the path of each service's page",
      input: Type.Object({}),
      output: Type.Array(QueueJob),
      handler: (_input, ctx) => ctx.cradle.deploymentRequests.queue(),
    }),
    deployment.query('one', {
      permission: 'deployment.read',
      summary: 'One deployment',
      input: DeploymentIdInput,
      output: DeploymentView,
      handler: ({ deploymentId }, ctx) => ctx.cradle.deploymentRequests.one(deploymentId),
    }),
    deployment.query('readLogs', {
      permission: 'deployment.read',
      summary: "The last lines of a deployment's log (follow it live at GET /api/deployment.logs/stream?deploymentId=…)",
      input: ReadLogsInput,
      output: LogText,
      handler: ({ deploymentId, tail }, ctx) => ctx.cradle.deploymentRequests.readLogs(deploymentId, tail ?? 100),
    }),
    deployment.mutation('killProcess', {
      permission: 'deployment.cancel',
      summary: 'Stop a running (or queued) deployment: it ends cancelled; a finished one is a 400',
      input: DeploymentIdInput,
      output: DeploymentView,
      handler: ({ deploymentId }, ctx) => ctx.cradle.deploymentRequests.kill(deploymentId),
    }),
    deployment.mutation('removeDeployment', {
      permission: 'deployment.cancel',
      summary: 'Delete a finished deployment and its log; answers it as it was',
      input: DeploymentIdInput,
      output: DeploymentView,
      handler: ({ deploymentId }, ctx) => ctx.cradle.deploymentRequests.remove(deploymentId),
    }),
  ];
};
