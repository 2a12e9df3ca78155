// One row per run of a workload job. The rows in status `queued` are the durable queue
// itself: the Agenda jobs only wake the dispatcher, so nothing is lost if a wake-up is.
import { columns, defineEntity, p } from '@berth/core';

export const Deployment = defineEntity({
  name: 'Deployment',
  tableName: 'deployments',
  indexes: [{ properties: ['targetType', 'targetId', 'createdAt'] }],
  properties: {
    deploymentId: columns.primaryId(),
    title: p.text(),
    description: p.text().nullable(),
    /** A tag to check out instead of the workload's branch (a tag push deploys its tag); not answered. */
    checkout: p.string().length(255).nullable(),
    /** A rollback deployment's release: the rollback entry it rolls out (rollback.rollback); not answered. */
    rollsBack: p.string().length(32).nullable(),
    /** queued → running → done | error | cancelled */
    status: p.string().length(16),
    action: p.string().length(64),
    targetType: p.string().length(32),
    targetId: p.string().length(64),
    organizationId: columns.berthId(),
    /** The host that runs it; null = the local engine. */
    serverId: p.string().length(64).nullable(),
    /** The build server it built on (DeploymentRun.buildsOn); null = where it runs. */
    buildServerId: p.string().length(64).nullable(),
    logPath: p.text(),
    errorMessage: p.text().nullable(),
    createdAt: columns.createdAt(),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
  },
});

export type DeploymentRow = InstanceType<typeof Deployment.class>;

/**
 * This machine's share of the queue as its operators set it (settings.updateBuildsConcurrency,
 * settings.updateRemoteServersOnly): one row, `this-machine`; without it, the configuration's
 * deployConcurrency and every host open. A server's limit is its record's buildsConcurrency.
 */
export const QueueSettings = defineEntity({
  name: 'DeploymentQueueSettings',
  tableName: 'deployment_queue_settings',
  properties: {
    hostKey: p.string().length(32).primary(),
    /** Deployments that run at once on this machine; null: deployConcurrency. */
    buildsConcurrency: p.integer().nullable(),
    /** Workloads deploy to servers only: a workload's deployment on this machine is refused. */
    remoteServersOnly: p.boolean(),
  },
});

export type QueueSettingsRow = InstanceType<typeof QueueSettings.class>;
export const deploymentEntities = [Deployment, QueueSettings];
