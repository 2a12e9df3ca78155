// A stored deployment as the contract (DeploymentRecord) and the API (DeploymentView) see it.
import { CANCELLED_MESSAGE, iso, WIRE_STATUS, type DeploymentRecord, type DeploymentState, type DeploymentTargetType } from '@berth/core';
import type { DeploymentView, TargetField } from './schemas.ts';
import type { DeploymentRow } from './entities.ts';

export const toRecord = (d: DeploymentRow): DeploymentRecord => ({
  deploymentId: d.deploymentId,
  title: d.title,
  description: d.description ?? null,
  ...(d.checkout ? { checkout: d.checkout } : {}),
  ...(d.rollsBack ? { rollsBack: d.rollsBack } : {}),
  state: d.status as DeploymentState,
  action: d.action,
  targetType: d.targetType as DeploymentTargetType,
  targetId: d.targetId,
  organizationId: d.organizationId,
  serverId: d.serverId ?? null,
  buildServerId: d.buildServerId ?? null,
  logPath: d.logPath,
  errorMessage: d.errorMessage ?? null,
  createdAt: iso(d.createdAt)!,
  startedAt: iso(d.startedAt ?? null),
  finishedAt: iso(d.finishedAt ?? null),
});

/** The record plus the peer's per-target id fields: the target's id under its own field, null under the others. */
/**
 * The record plus the peer's per-target id fields: the target's id under its own field, null under
 * the others. `status` is the peer's (queued and running answer running, cancelled answers error
 * with the cancellation as its errorMessage); Berth's own state is answered beside it in `state`.
 */
export function toView(record: DeploymentRecord, targets: TargetField[]): DeploymentView {
  const ids = Object.fromEntries(targets.filter(t => t.idField !== 'serverId').map(t => [t.idField, record.targetType === t.type ? record.targetId : null]));
  const { checkout: _checkout, rollsBack: _rollsBack, ...answered } = record; // Berth's own, not the peer's: not answered
  const { state } = record;
  return {
    ...answered,
    status: WIRE_STATUS[state],
    errorMessage: state === 'cancelled' ? (record.errorMessage ?? CANCELLED_MESSAGE) : record.errorMessage,
    startedAt: state === 'queued' ? null : record.startedAt,
    ...ids,
    isPreviewDeployment: record.targetType === 'previewDeployment',
    pid: null,
    rollbackId: null,
  } as DeploymentView;
}

export const finishedStates: DeploymentState[] = ['done', 'error', 'cancelled'];
export const isFinished = (state: string) => (finishedStates as string[]).includes(state);
