// billing.* (the spec's name) and stripe.* (the peer's router, which its SDK calls): one list of
// procedures served under both. Out (listed in docs/ai-and-billing.md): stripe.getCurrentPlan,
// getInvoices, upgradeSubscription, updateInvoiceNotifications.
import { Type, router } from '@berth/core';
import { CheckoutInput, CheckoutView, PortalView, ProductsView } from './schemas.ts';

type Ctx = { cradle: { principal?: { organizationId: string; userId: string } | null }; origin: string };
const org = (ctx: Ctx) => ctx.cradle.principal!.organizationId;

const billingRouter = (name: 'billing' | 'stripe') => {
  const r = router(name, 'organization');
  return [
    r.query('getProducts', {
      access: 'admin',
      summary: "The Stripe products of the instance's tiers, the organization's active subscription and its plan (404 while billing is off)",
      input: Type.Object({}),
      output: ProductsView,
      handler: (_input, ctx) => ctx.cradle.billing.whenEnabled(() => ctx.cradle.billing.products(org(ctx), ctx.cradle.em)),
    }),
    r.mutation('createCheckoutSession', {
      access: 'admin',
      summary: 'A Stripe Checkout session for a subscription of serverQuantity servers of a tier; servers are granted once its invoice is paid (404 while billing is off)',
      input: CheckoutInput,
      output: CheckoutView,
      handler: (input, ctx) => ctx.cradle.billing.checkout(input, org(ctx), ctx.cradle.principal!.userId, ctx.origin, ctx.cradle.em),
    }),
    r.mutation('createCustomerPortalSession', {
      access: 'admin',
      summary: "The Stripe customer portal of the organization's subscription (404 while billing is off)",
      input: Type.Object({}),
      output: PortalView,
      handler: (_input, ctx) => ctx.cradle.billing.portal(org(ctx), ctx.origin, ctx.cradle.em),
    }),
    r.query('canCreateMoreServers', {
      summary: 'Whether server.create would accept another server: always true while billing is off, else while the organization has fewer servers than its paid quantity',
      input: Type.Object({}),
      output: Type.Boolean(),
      handler: (_input, ctx) => ctx.cradle.billing.canCreateMoreServers(org(ctx), ctx.cradle.em),
    }),
  ];
};

export const billingProcedures = [...billingRouter('billing'), ...billingRouter('stripe')];
