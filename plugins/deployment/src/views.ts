// A stored deployment as the contract (DeploymentRecord) and the API (DeploymentView) see it.
import { iso, type DeploymentRecord, type DeploymentStatus, type DeploymentTargetType, type DeploymentView } from '@berth/core';
import type { DeploymentRow } from './entities.ts';

export const toRecord = (d: DeploymentRow): DeploymentRecord => ({
  deploymentId: d.deploymentId,
  title: d.title,
  description: d.description ?? null,
  status: d.status as DeploymentStatus,
  action: d.action,
  targetType: d.targetType as DeploymentTargetType,
  targetId: d.targetId,
  organizationId: d.organizationId,
  serverId: d.serverId ?? null,
  logPath: d.logPath,
  errorMessage: d.errorMessage ?? null,
  createdAt: iso(d.createdAt)!,
  startedAt: iso(d.startedAt ?? null),
  finishedAt: iso(d.finishedAt ?? null),
});

/** The peer's per-kind id fields: the target's id under its own name, null under the others. */
export function toView(record: DeploymentRecord): DeploymentView {
  const idOf = (type: DeploymentTargetType) => (record.targetType === type ? record.targetId : null);
  return {
    ...record,
    applicationId: idOf('application'),
    composeId: idOf('compose'),
    scheduleId: idOf('schedule'),
    previewDeploymentId: idOf('previewDeployment'),
    isPreviewDeployment: record.targetType === 'previewDeployment',
    backupId: idOf('backup'),
    volumeBackupId: idOf('volumeBackup'),
    postgresId: idOf('postgres'),
    mysqlId: idOf('mysql'),
    mariadbId: idOf('mariadb'),
    mongoId: idOf('mongo'),
    redisId: idOf('redis'),
  };
}

export const finishedStatuses: DeploymentStatus[] = ['done', 'error', 'cancelled'];
export const isFinished = (status: string) => (finishedStatuses as string[]).includes(status);
