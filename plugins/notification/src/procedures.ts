// notification.* — the spec's older operations and the peer's current ones: create, update and
// test per enabled channel (from its provider), remove, one, all, getEmailProviders,
// receiveNotification (the monitoring agent's callback, no API key), and Berth's delivery log.
import { Type, router, type NotificationChannel, type ProcedureFactory } from '@berth/core';
import { receiveNotification } from './receive.ts';
import { createdView, createInput, DeliveriesInput, DeliveryView, NotificationIdInput, notificationView, ReceiveNotificationInput, testInput, updateInput } from './schemas.ts';

const notification = router('notification', 'organization');
/** The channels getEmailProviders lists. */
const EMAIL_CHANNELS = ['email', 'resend'];

export const notificationProcedures =
  (channels: () => NotificationChannel[]): ProcedureFactory =>
  () => {
    const enabled = channels();
    // One instance of each view, shared by the operations that answer it (24 copies of the created
    // view cost a measurable part of the idle footprint).
    const View = notificationView(enabled);
    const Created = createdView(enabled);
    const perChannel = enabled.flatMap(c => [
      notification.mutation(`create${c.procedureSuffix}`, {
        permission: 'notification.create',
        summary: `A ${c.label} channel: the events it hears (toggles) and its settings; secrets are kept sealed${c.signed ? '; answers the signing secret once' : ''}`,
        input: createInput(c),
        output: Created,
        handler: (input, ctx) => ctx.cradle.notificationService.create(c, input),
      }),
      notification.mutation(`update${c.procedureSuffix}`, {
        permission: 'notification.update',
        summary: `Changes a ${c.label} channel; a secret sent back masked, as answers show it, keeps its value${c.signed ? '; rotateSecret makes a new signing secret (answered once)' : ''}`,
        input: updateInput(c),
        output: Created,
        handler: (input, ctx) => ctx.cradle.notificationService.update(c, input),
      }),
      notification.mutation(`test${c.procedureSuffix}Connection`, {
        permission: 'notification.create',
        summary: `Sends a test message through ${c.label} for real; a failure is BAD_REQUEST quoting the provider's status and answer, secrets redacted`,
        input: testInput(c),
        output: Type.Boolean(),
        handler: (input, ctx) => ctx.cradle.notificationService.test(c, input as Record<string, unknown>),
      }),
    ]);
    return [
      ...perChannel,
      notification.mutation('remove', {
        permission: 'notification.delete',
        summary: "Deletes a channel and its delivery log; answers its record as it was (without its channel's settings)",
        input: NotificationIdInput,
        output: notificationView(enabled, []),
        handler: ({ notificationId }, ctx) => ctx.cradle.notificationService.remove(notificationId),
      }),
      notification.query('one', {
        permission: 'notification.read',
        summary: 'A channel with its settings (secrets masked)',
        input: NotificationIdInput,
        output: View,
        handler: ({ notificationId }, ctx) => ctx.cradle.notificationService.one(notificationId),
      }),
      notification.query('all', {
        permission: 'notification.read',
        summary: 'Every channel of the organization, newest first',
        input: Type.Object({}),
        output: Type.Array(View),
        handler: (_i, ctx) => ctx.cradle.notificationService.all(),
      }),
      notification.query('getEmailProviders', {
        permission: 'notification.read',
        summary: 'The channels that send email (email, resend)',
        input: Type.Object({}),
        output: Type.Array(notificationView(enabled, EMAIL_CHANNELS)),
        handler: (_i, ctx) => ctx.cradle.notificationService.all(EMAIL_CHANNELS),
      }),
      notification.query('deliveries', {
        permission: 'notification.read',
        summary: "What was sent through a channel, newest first: event, time, tries, state (pending, sending, sent, dead) and the provider's answer (redacted)",
        input: DeliveriesInput,
        output: Type.Array(DeliveryView),
        handler: (input, ctx) => ctx.cradle.notificationService.deliveries(input),
      }),
      notification.mutation('receiveNotification', {
        scope: 'public',
        summary: "The monitoring agent's report of a threshold, authenticated by its server's monitoring token (no API key); a wrong token is 401",
        input: ReceiveNotificationInput,
        output: Type.Boolean(),
        handler: (input, ctx) => receiveNotification(input, ctx.cradle),
      }),
    ];
  };
