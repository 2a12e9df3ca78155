// One row per live preview: the pull request it deploys, its service (appName), its domain and
// its status. The peer's fields (its numbers and ids are text there, and so on the wire).
import { columns, defineEntity, p } from '@berth/core';

export const PreviewDeployment = defineEntity({
  name: 'PreviewDeployment',
  tableName: 'preview_deployments',
  uniques: [{ properties: ['applicationId', 'pullRequestId'] }],
  properties: {
    previewDeploymentId: columns.primaryId(),
    applicationId: columns.berthId(),
    organizationId: columns.berthId(),
    /** The pull request's head branch (what is cloned). */
    branch: p.string().length(255),
    /** The fork the branch is in (owner/name), cloned through the application's connection; null when it is the application's repository. Not answered. */
    headRepository: p.string().length(255).nullable(),
    pullRequestId: p.string().length(64),
    pullRequestNumber: p.string().length(16),
    pullRequestURL: p.text(),
    pullRequestTitle: p.text(),
    /** The provider's id of the one comment kept up to date on the pull request ('' until it is made). */
    pullRequestCommentId: p.string().length(64),
    /** idle, running, done, error (the peer's application statuses). */
    previewStatus: p.string().length(8),
    /** The Swarm service name: <application appName>-pr-<number>. */
    appName: p.string().length(63).unique(),
    domainId: columns.berthId().nullable(),
    /** The head commit of the last event that deployed it. */
    headSha: p.string().length(64).nullable(),
    createdAt: p.datetime(),
    expiresAt: p.datetime().nullable(),
  },
});

export type PreviewRow = InstanceType<typeof PreviewDeployment.class>;
export const previewEntities = [PreviewDeployment];
