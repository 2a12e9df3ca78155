// A channel record of one organization (its kind's settings, secrets sealed) and the outbox of
// deliveries: one row per event and subscribed channel, written before anything is sent.
import { columns, defineEntity, p, newId } from '@berth/core';

export const Notification = defineEntity({
  name: 'Notification',
  tableName: 'notifications',
  indexes: [{ properties: ['organizationId', 'createdAt'] }],
  properties: {
    notificationId: columns.primaryId(),
    organizationId: columns.berthId(),
    name: p.string(),
    /** The channel provider's id (slack, telegram, ...): the peer's notificationType. */
    notificationType: p.string().length(32),
    /** The id of the channel's own record in the peer's shape (`slackId`, `telegramId`, ...). */
    channelId: columns.berthId().onCreate(() => newId()),
    /** The settings that are not secrets. */
    settings: p.json<Record<string, unknown>>(),
    /** The secret settings as one JSON object, sealed by SecretBox. */
    secrets: p.text(),
    /** Channels that sign (custom webhooks): the `whsec_…` secret, sealed. */
    signingSecret: p.text().nullable(),
    appDeploy: p.boolean().default(false),
    appBuildError: p.boolean().default(false),
    databaseBackup: p.boolean().default(false),
    volumeBackup: p.boolean().default(false),
    dokployBackup: p.boolean().default(false),
    platformRestart: p.boolean().default(false),
    dockerCleanup: p.boolean().default(false),
    serverThreshold: p.boolean().default(false),
    appHealth: p.boolean().default(false),
    createdAt: columns.createdAt(),
  },
});
export type NotificationRow = InstanceType<typeof Notification.class>;

export const deliveryStates = ['pending', 'sending', 'sent', 'dead'] as const;
export type DeliveryState = (typeof deliveryStates)[number];

export const Delivery = defineEntity({
  name: 'NotificationDelivery',
  tableName: 'notification_deliveries',
  indexes: [{ properties: ['notificationId', 'createdAt'] }],
  properties: {
    deliveryId: columns.primaryId(),
    notificationId: columns.berthId(),
    organizationId: columns.berthId(),
    event: p.string().length(64),
    /** The rendered NotificationMessage (no secrets: it is what every channel of the event shows). */
    message: p.json<Record<string, unknown>>(),
    state: p.string().length(16).default('pending'),
    tries: p.integer().default(0),
    nextAttemptAt: p.datetime(),
    /** While `sending`: when another worker may take it over (the sender died). */
    lockedUntil: p.datetime().nullable(),
    lastAttemptAt: p.datetime().nullable(),
    sentAt: p.datetime().nullable(),
    /** The provider's last answer: its status (null: none) and the start of its body, secrets redacted. */
    answerStatus: p.integer().nullable(),
    answer: p.text().nullable(),
    createdAt: columns.createdAt(),
  },
});
export type DeliveryRow = InstanceType<typeof Delivery.class>;

export const notificationEntities = [Notification, Delivery];
