// What deployment.* takes and answers. The target types, and the peer's `<kind>Id` fields of a
// deployment, are derived from the registered targets: every workload kind of the registry
// and the non-workload targets plugins register (made once every plugin is set up).
import { Type, deploymentStates, deploymentStatuses, schema, type Static, type TSchema } from '@berth/core';

const { NonEmpty, Nullable, Timestamp } = schema;

/** A target type and the id field a deployment shows it under. */
export interface TargetField {
  type: string;
  idField: string;
}

/** The peer's non-workload targets, registered here until the plugins that own them register them themselves. */
export const peerTargets: TargetField[] = [
  { type: 'server', idField: 'serverId' },
  { type: 'compose', idField: 'composeId' }, // kind-names: the peer's, for an instance whose compose plugin is disabled (a registered kind takes precedence)
  { type: 'schedule', idField: 'scheduleId' },
  { type: 'previewDeployment', idField: 'previewDeploymentId' },
  { type: 'backup', idField: 'backupId' },
  { type: 'volumeBackup', idField: 'volumeBackupId' },
];

const DeploymentFields = {
  deploymentId: Type.String(),
  title: Type.String(),
  description: Nullable(Type.String()),
  status: Type.Enum(deploymentStatuses, { description: "the peer's status: running (queued or running), done, error (failed or cancelled); Berth's finer state is in state" }),
  state: Type.Enum(deploymentStates, { description: "Berth's state: queued (waiting its turn), running, done, error, cancelled" }),
  action: Type.String({ description: 'what the job does: deploy, redeploy, reload, start, stop...' }),
  targetId: Type.String(),
  organizationId: Type.String(),
  serverId: Nullable(Type.String({ description: 'the host that runs it; null = the local engine' })),
  logPath: Type.String(),
  errorMessage: Nullable(Type.String()),
  createdAt: Timestamp(),
  startedAt: Nullable(Timestamp()),
  finishedAt: Nullable(Timestamp()),
  isPreviewDeployment: Type.Boolean(),
  pid: Nullable(Type.String({ description: "the peer's process id of a running deployment; Berth cancels through the queue (always null)" })),
  rollbackId: Nullable(
    Type.String({ description: 'the release the deployment made, kept to roll back to (rollback.rollback); answered by deployment.allByType, null elsewhere and without the rollback plugin' }),
  ),
  buildServerId: Nullable(Type.String({ description: "the build server it built on (an application's buildServerId); null when it built where it runs" })),
};

/** A release a deployment made, kept to roll back to: the peer's rollback row (the rollback plugin's; fullContext without secrets). */
export const DeploymentRollback = Type.Object(
  {
    rollbackId: Type.String(),
    deploymentId: Type.String(),
    version: Type.Integer({ description: "the release's number: rising, never given twice" }),
    image: Type.String({ description: 'what a rollback rolls out: the rollback tag on the engine, or the rollback registry reference' }),
    createdAt: Timestamp(),
    fullContext: Type.Record(Type.String(), Type.Unknown(), { description: 'what the release ran, without env values or credentials' }),
  },
  { description: 'a release kept to roll back to (rollback.rollback takes its rollbackId)' },
);

export function deploymentSchemas(targets: TargetField[]) {
  const types = targets.map(t => t.type);
  // serverId is the record's own field (the host that runs it); for a server's own deployments that is the server itself.
  const idFields: Record<string, TSchema> = Object.fromEntries(
    targets.filter(t => t.idField !== 'serverId').map(t => [t.idField, Nullable(Type.String({ description: `the ${t.type} it belongs to (null unless targetType is "${t.type}")` }))]),
  );
  /** A deployment as every read answers it: the record plus the peer's id fields derived from targetType. */
  const DeploymentView = Type.Object({ ...DeploymentFields, targetType: Type.String({ description: `what it belongs to: ${types.join(', ')}` }), ...idFields });
  const ByTypeInput = Type.Object({ id: NonEmpty(), type: Type.Enum(types) });
  return { DeploymentView, ByTypeInput };
}

export type DeploymentView = Static<ReturnType<typeof deploymentSchemas>['DeploymentView']>;

export const ApplicationIdInput = Type.Object({ applicationId: NonEmpty() });
export const ComposeIdInput = Type.Object({ composeId: NonEmpty() });
export const ServerIdInput = Type.Object({ serverId: NonEmpty() });
export const DeploymentIdInput = Type.Object({ deploymentId: NonEmpty() });
export const ReadLogsInput = Type.Object({ deploymentId: NonEmpty(), tail: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, default: 100, description: 'how many of the last lines' })) });
export const LogText = Type.String({ description: 'the last lines of the log, secrets masked' });
