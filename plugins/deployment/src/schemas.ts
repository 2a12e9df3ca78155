// What deployment.* takes. Every answer is core's DeploymentView (or a log text).
import { Type, schema, type Static } from '@berth/core';

const { NonEmpty } = schema;

/** The target types the peer's deployment.allByType accepts, and the database kinds, whose deployments Berth records too. */
export const listableTypes = ['application', 'compose', 'server', 'schedule', 'previewDeployment', 'backup', 'volumeBackup', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis'] as const;

export const ApplicationIdInput = Type.Object({ applicationId: NonEmpty() });
export const ComposeIdInput = Type.Object({ composeId: NonEmpty() });
export const ServerIdInput = Type.Object({ serverId: NonEmpty() });
export const ByTypeInput = Type.Object({
  id: NonEmpty(),
  type: Type.Enum([...listableTypes]),
});
export type ByTypeInput = Static<typeof ByTypeInput>;
export const DeploymentIdInput = Type.Object({ deploymentId: NonEmpty() });
export const ReadLogsInput = Type.Object({
  deploymentId: NonEmpty(),
  tail: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, default: 100, description: 'how many of the last lines' })),
});
export const LogText = Type.String({ description: 'the last lines of the log, secrets masked' });
