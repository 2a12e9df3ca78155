// A stored deployment as the contract (DeploymentRecord) and the API (DeploymentView) see it.
import { iso, type DeploymentRecord, type DeploymentStatus, type DeploymentTargetType } from '@berth/core';
import type { DeploymentView, TargetField } from './schemas.ts';
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

/** The record plus the peer's per-target id fields: the target's id under its own field, null under the others. */
export function toView(record: DeploymentRecord, targets: TargetField[]): DeploymentView {
  const ids = Object.fromEntries(targets.filter(t => t.idField !== 'serverId').map(t => [t.idField, record.targetType === t.type ? record.targetId : null]));
  return { ...record, ...ids, isPreviewDeployment: record.targetType === 'previewDeployment', pid: null, rollbackId: null, buildServerId: null } as DeploymentView;
}

export const finishedStatuses: DeploymentStatus[] = ['done', 'error', 'cancelled'];
export const isFinished = (status: string) => (finishedStatuses as string[]).includes(status);
