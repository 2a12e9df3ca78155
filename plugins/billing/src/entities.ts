// Billing per organization: its Stripe customer and subscription, the servers a paid invoice
// granted, the grace period a failed payment started; and the log of Stripe events already
// handled, so that a replayed event changes nothing.
import { columns, defineEntity, p } from '@berth/core';

export const BillingAccount = defineEntity({
  name: 'BillingAccount',
  tableName: 'billing_accounts',
  properties: {
    organizationId: columns.berthId().primary(),
    stripeCustomerId: p.string().nullable(),
    stripeSubscriptionId: p.string().nullable(),
    /** Servers the last paid invoice granted (lowered at once when the subscription shrinks or ends). */
    serversQuantity: p.integer(),
    /** When the payment that started the grace period failed; null while paid. */
    paymentFailedAt: p.datetime().nullable(),
    /** Until when a failed payment leaves the servers as they are; null while paid. */
    graceUntil: p.datetime().nullable(),
    /** The servers billing set inactive (and only these are set active again by a payment). */
    deactivatedServerIds: p.json<string[]>(),
    /** The owner's wish to have invoices e-mailed (stripe.updateInvoiceNotifications; user.get shows it on the owner). */
    sendInvoiceNotifications: p.boolean().default(false),
    updatedAt: p.datetime().onCreate(() => new Date()),
  },
});
export type BillingAccountRow = InstanceType<typeof BillingAccount.class>;

export const BillingEvent = defineEntity({
  name: 'BillingEvent',
  tableName: 'billing_events',
  properties: { eventId: p.string().primary(), type: p.string(), organizationId: columns.berthId().nullable(), receivedAt: p.datetime().onCreate(() => new Date()) },
});

export const billingEntities = [BillingAccount, BillingEvent];
