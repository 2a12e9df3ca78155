// One row per delivery a workload's hook received: who sent it, whether its signature held,
// what Berth decided and the deployment it queued. The newest webhookDeliveriesKept are kept.
import { columns, defineEntity, p } from '@berth/core';

export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  indexes: [{ properties: ['targetType', 'targetId', 'createdAt'] }],
  properties: {
    webhookDeliveryId: columns.primaryId(),
    targetType: p.string().length(32),
    targetId: p.string().length(64),
    organizationId: columns.berthId(),
    /** The forge's provider id (github, gitlab, gitea, bitbucket, a third party's), dockerhub, or generic (no forge's headers). */
    provider: p.string().length(64),
    /** The provider's event name (push, Tag Push Hook, repo:push...). */
    event: p.string().length(64),
    /** The provider's delivery id (null when it sends none). */
    deliveryId: p.string().length(128).nullable(),
    /** true: signed and verified; false: missing or wrong; null: no secret asked for one. */
    signatureOk: p.boolean().nullable(),
    statusCode: p.integer(),
    /** Why: "queued", or the reason nothing was deployed. */
    decision: p.text(),
    deploymentId: columns.berthId().nullable(),
    /** The pushed ref and commit, when the delivery named them. */
    ref: p.string().length(255).nullable(),
    commit: p.string().length(64).nullable(),
    createdAt: columns.createdAt(),
  },
});

/** A push webhook Berth registered on a workload's repository through its git provider connection (one per workload). */
export const RegisteredWebhook = defineEntity({
  name: 'RegisteredWebhook',
  tableName: 'registered_webhooks',
  indexes: [{ properties: ['targetType', 'targetId'] }],
  properties: {
    registeredWebhookId: columns.primaryId(),
    targetType: p.string().length(32),
    targetId: p.string().length(64),
    organizationId: columns.berthId(),
    /** The source type and connection it was registered through (gitlab and the gitlabId...). */
    provider: p.string().length(64),
    connectionId: p.string().length(64),
    owner: p.string().length(255),
    name: p.string().length(255),
    /** The provider's id of the webhook. */
    hookId: p.string().length(128),
    /** Where it points, and a SHA-256 of the secret it was given: a change of either registers it anew. */
    url: p.text(),
    secretHash: p.string().length(64),
    createdAt: columns.createdAt(),
  },
});

export type WebhookDeliveryRow = InstanceType<typeof WebhookDelivery.class>;
export type RegisteredWebhookRow = InstanceType<typeof RegisteredWebhook.class>;
export const deployHookEntities = [WebhookDelivery, RegisteredWebhook];
