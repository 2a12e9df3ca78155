// The wire shapes of notification.*: per channel, made from its settings schema (create, update,
// test), the peer's notification record with one relation per enabled channel, the delivery log.
import { Type, schema, type NotificationChannel, type TSchema } from '@berth/core';
import { RemoveOptional } from 'typebox';
import { TOGGLES } from './events.ts';

type TObject = TSchema & { properties: Record<string, TSchema>; required?: string[] };
const propsOf = (c: NotificationChannel) => (c.settings as TObject).properties;

const toggle = (what: string) => Type.Boolean({ description: `Send ${what}` });
/** The toggles of both API variants; the older variant's five are required on create, one of platformRestart / dokployRestart too. */
const Toggles = {
  appDeploy: toggle('when a deployment succeeds'),
  appBuildError: toggle('when a build or deployment fails'),
  databaseBackup: toggle('database backup results'),
  dockerCleanup: toggle('docker cleanup reports'),
};
const OptionalToggles = {
  platformRestart: Type.Optional(toggle("when Berth starts (the older variant's name of dokployRestart)")),
  dokployRestart: Type.Optional(toggle('when Berth starts')),
  volumeBackup: Type.Optional(toggle('volume backup results')),
  dokployBackup: Type.Optional(toggle("results of backups of Berth's own data")),
  serverThreshold: Type.Optional(toggle('server thresholds crossed, servers unreachable and back')),
  appHealth: Type.Optional(toggle("failed scheduled jobs, expiring or unrenewed certificates and runtime health (Berth's; absent: the value of appBuildError)")),
};

export const idField = (c: NotificationChannel) => `${c.id}Id`;

export function createInput(c: NotificationChannel) {
  return Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }), ...Toggles, ...OptionalToggles, ...propsOf(c) });
}

export function updateInput(c: NotificationChannel) {
  const settings = Object.fromEntries(Object.entries(propsOf(c)).map(([k, s]) => [k, Type.Optional(s)]));
  return Type.Object({
    notificationId: Type.String({ minLength: 1, maxLength: 255 }),
    [idField(c)]: Type.String({ minLength: 1, maxLength: 255, description: `The channel record's id (${idField(c)} of notification.one)` }),
    organizationId: Type.Optional(Type.String({ maxLength: 255 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    ...Object.fromEntries(Object.entries(Toggles).map(([k, s]) => [k, Type.Optional(s)])),
    ...OptionalToggles,
    ...settings,
    ...(c.signed ? { rotateSecret: Type.Optional(Type.Boolean({ description: 'Make a new signing secret (answered once, in signingSecret)' })) } : {}),
  });
}

export const testInput = (c: NotificationChannel) => c.settings;

/** One channel's record inside a notification, as the peer joins it (optional settings null when unset); secret settings masked. */
const channelRecord = (c: NotificationChannel) => {
  const required = new Set((c.settings as TObject).required ?? []);
  return Type.Object({
    [idField(c)]: Type.String(),
    ...Object.fromEntries(
      Object.entries(propsOf(c)).map(([k, s]) => [k, required.has(k) || (s as { default?: unknown }).default !== undefined ? RemoveOptional(s) : schema.Nullable(RemoveOptional(s))]),
    ),
  });
};

/** The record; with `relations`, the records of those channels joined (the peer's findNotificationById joins all, getEmailProviders email and resend, remove none). */
export function notificationView(channels: NotificationChannel[], relations: string[] | 'all' = 'all') {
  const joined = channels.filter(c => relations === 'all' || relations.includes(c.id));
  return Type.Object({
    notificationId: Type.String(),
    name: Type.String(),
    ...Object.fromEntries(TOGGLES.map(t => [t, Type.Boolean()])),
    dokployRestart: Type.Boolean({ description: 'The same toggle as platformRestart' }),
    notificationType: Type.String({ description: `The channel: ${channels.map(c => c.id).join(', ')}` }),
    createdAt: schema.Timestamp(),
    organizationId: Type.String(),
    ...Object.fromEntries(channels.map(c => [idField(c), schema.Nullable(Type.String())])),
    ...Object.fromEntries(joined.map(c => [c.id, schema.Nullable(channelRecord(c))])),
  });
}

export function createdView(channels: NotificationChannel[]) {
  const view = notificationView(channels);
  return Type.Object({
    ...view.properties,
    signingSecret: Type.Optional(Type.String({ description: 'Signed channels: the secret receivers verify with (whsec_…); answered here once, never again' })),
  });
}

export const NotificationIdInput = Type.Object({ notificationId: Type.String({ minLength: 1, maxLength: 255 }) });

export const DeliveriesInput = Type.Object({ notificationId: Type.String({ minLength: 1, maxLength: 255 }), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })) });

export const DeliveryView = Type.Object({
  deliveryId: Type.String(),
  notificationId: Type.String(),
  event: Type.String({ description: 'The bus event: appDeploy, appBuildError, databaseBackup, ...' }),
  title: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('sending'), Type.Literal('sent'), Type.Literal('dead')]),
  tries: Type.Integer(),
  createdAt: schema.Timestamp(),
  lastAttemptAt: schema.Nullable(schema.Timestamp()),
  nextAttemptAt: schema.Nullable(schema.Timestamp()),
  sentAt: schema.Nullable(schema.Timestamp()),
  answer: schema.Nullable(Type.Object({ status: schema.Nullable(Type.Integer()), body: Type.String({ description: "The provider's answer or the error, at most 500 characters, secrets redacted" }) })),
});

export const ReceiveNotificationInput = Type.Object({
  ServerType: Type.Optional(Type.Union([Type.Literal('Dokploy'), Type.Literal('Remote')], { default: 'Dokploy' })),
  Type: Type.Union([Type.Literal('Memory'), Type.Literal('CPU')]),
  Value: Type.Number(),
  Threshold: Type.Number(),
  Message: Type.String({ maxLength: 2_000 }),
  Timestamp: Type.String({ maxLength: 64 }),
  Token: Type.String({ maxLength: 512 }),
});
