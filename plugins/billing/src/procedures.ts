// billing.* (the spec's name) and stripe.* (the peer's router, which its SDK calls): one list of
// procedures served under both, and the peer's other stripe.* procedures (its web UI's billing
// page), served under stripe.* only.
import { Type, router } from '@berth/core';
import { CheckoutInput, CheckoutView, CurrentPlan, InvoiceNotificationsInput, InvoiceView, Ok, PortalView, ProductsView, UpgradeInput } from './schemas.ts';

type Ctx = { cradle: { principal?: { organizationId: string; userId: string } | null }; origin: string };
const org = (ctx: Ctx) => ctx.cradle.principal!.organizationId;

const billingRouter = (name: 'billing' | 'stripe') => {
  const r = router(name, 'organization');
  return [
    r.query('getProducts', {
      permission: 'organization.update',
      access: 'admin',
      summary: "The Stripe products of the instance's tiers, the organization's active subscription and its plan (404 while billing is off)",
      input: Type.Object({}),
      output: ProductsView,
      handler: (_input, ctx) => ctx.cradle.billing.whenEnabled(() => ctx.cradle.billing.products(org(ctx), ctx.cradle.em)),
    }),
    r.mutation('createCheckoutSession', {
      permission: 'organization.update',
      access: 'admin',
      summary: 'A Stripe Checkout session for a subscription of serverQuantity servers of a tier; servers are granted once its invoice is paid (404 while billing is off)',
      input: CheckoutInput,
      output: CheckoutView,
      handler: (input, ctx) => ctx.cradle.billing.checkout(input, org(ctx), ctx.cradle.principal!.userId, ctx.origin, ctx.cradle.em),
    }),
    r.mutation('createCustomerPortalSession', {
      permission: 'organization.update',
      access: 'admin',
      summary: "The Stripe customer portal of the organization's subscription (404 while billing is off)",
      input: Type.Object({}),
      output: PortalView,
      handler: (_input, ctx) => ctx.cradle.billing.portal(org(ctx), ctx.origin, ctx.cradle.em),
    }),
    r.query('canCreateMoreServers', {
      permission: 'server.create',
      summary: 'Whether server.create would accept another server: always true while billing is off, else while the organization has fewer servers than its paid quantity',
      input: Type.Object({}),
      output: Type.Boolean(),
      handler: (_input, ctx) => ctx.cradle.billing.canCreateMoreServers(org(ctx), ctx.cradle.em),
    }),
  ];
};

const stripe = router('stripe', 'organization');
const peerOnly = [
  stripe.query('getCurrentPlan', {
    permission: 'member',
    summary: "The organization's plan (legacy, hobby or startup) as its active subscription's prices say; null while billing is off, before a subscription, or for prices of no configured tier",
    input: Type.Object({}),
    output: CurrentPlan,
    handler: (_input, ctx) => ctx.cradle.billing.currentPlan(org(ctx), ctx.cradle.em),
  }),
  stripe.query('getInvoices', {
    permission: 'organization.update',
    access: 'admin',
    summary: "The organization's last 100 Stripe invoices, newest first ([] while billing is off or before its first checkout)",
    input: Type.Object({}),
    output: Type.Array(InvoiceView),
    handler: (_input, ctx) => ctx.cradle.billing.invoices(org(ctx), ctx.cradle.em),
  }),
  stripe.mutation('upgradeSubscription', {
    permission: 'organization.update',
    access: 'admin',
    summary:
      "Move the organization's active subscription to a tier's prices for serverQuantity servers, prorated; servers follow Stripe's events (fewer at once, more once the invoice is paid). 400 without an active subscription, 404 while billing is off",
    input: UpgradeInput,
    output: Ok,
    handler: (input, ctx) => ctx.cradle.billing.upgrade(input, org(ctx), ctx.cradle.em),
  }),
  stripe.mutation('updateInvoiceNotifications', {
    permission: 'organization.update',
    access: 'admin',
    summary: "Store whether the organization's owner wants invoices e-mailed (user.get shows it on the owner); 404 while billing is off",
    input: InvoiceNotificationsInput,
    output: Ok,
    handler: ({ enabled }, ctx) => ctx.cradle.billing.setInvoiceNotifications(enabled, org(ctx), ctx.cradle.em),
  }),
];

export const billingProcedures = [...billingRouter('billing'), ...billingRouter('stripe'), ...peerOnly];
