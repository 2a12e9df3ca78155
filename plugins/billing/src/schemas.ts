// What billing.* (and stripe.*, the same procedures) take and answer, in the peer's shapes.
// Products and subscriptions are Stripe's objects as the SDK returns them.
import { Type, schema, type Static } from '@berth/core';

const { Nullable } = schema;
export const Tier = Type.Union([Type.Literal('legacy'), Type.Literal('hobby'), Type.Literal('startup')]);
export type Tier = Static<typeof Tier>;

/** Servers included in one startup base price; each one past them is a hobby price. */
export const STARTUP_SERVERS_INCLUDED = 3;

export const CheckoutInput = Type.Object({
  tier: Tier,
  productId: Type.String({ maxLength: 255, description: 'the product the user picked (the tier and billing.stripePlans choose the prices)' }),
  serverQuantity: Type.Integer({ minimum: 1, maximum: 10_000, description: `servers to buy (the startup tier: at least ${STARTUP_SERVERS_INCLUDED})` }),
  isAnnual: Type.Boolean(),
});
export type CheckoutInput = Static<typeof CheckoutInput>;

const StripeObject = (what: string) => Type.Object({ id: Type.String() }, { additionalProperties: true, description: `a Stripe ${what} object, as Stripe answers it` });

export const ProductsView = Type.Object({
  products: Type.Array(StripeObject('product (default_price expanded)'), { description: 'the active products of the configured tiers (billing.stripePlans)' }),
  subscriptions: Type.Array(StripeObject('subscription (items.data.price expanded)'), { description: "the organization's active subscriptions; [] before its first checkout" }),
  hobbyProductId: Type.Optional(Type.String()),
  startupProductId: Type.Optional(Type.String()),
  currentPlan: Nullable(Tier),
  isAnnualCurrent: Type.Boolean(),
  currentPriceAmount: Nullable(Type.Number({ description: "the active subscription's amount per period, in the currency's main unit" })),
});
export type ProductsView = Static<typeof ProductsView>;

export const CheckoutView = Type.Object({ sessionId: Type.String({ description: 'the Stripe Checkout session to redirect the user to' }) });

/** The organization's plan as its active subscription's prices say; null while billing is off, before a subscription, or for prices of no configured tier. */
export const CurrentPlan = Nullable(Tier);

export const UpgradeInput = Type.Object({
  tier: Type.Union([Type.Literal('hobby'), Type.Literal('startup')]),
  serverQuantity: Type.Integer({ minimum: 1, maximum: 10_000, description: `servers the subscription pays for from now on (the startup tier: at least ${STARTUP_SERVERS_INCLUDED})` }),
  isAnnual: Type.Boolean(),
});
export type UpgradeInput = Static<typeof UpgradeInput>;

export const InvoiceNotificationsInput = Type.Object({ enabled: Type.Boolean({ description: "whether the organization's owner wants its invoices e-mailed" }) });

export const Ok = Type.Object({ ok: Type.Literal(true) });

/** One Stripe invoice of the organization, in the peer's fields (amounts in the currency's smallest unit, times in Unix seconds). */
export const InvoiceView = Type.Object({
  id: Type.String(),
  number: Nullable(Type.String()),
  status: Nullable(Type.String({ description: 'draft, open, paid, uncollectible or void' })),
  amountDue: Type.Number(),
  amountPaid: Type.Number(),
  currency: Type.String(),
  created: Type.Number(),
  dueDate: Nullable(Type.Number()),
  hostedInvoiceUrl: Nullable(Type.String()),
  invoicePdf: Nullable(Type.String()),
});
export type InvoiceView = Static<typeof InvoiceView>;
export const PortalView = Type.Object({ url: Type.String({ description: "the Stripe customer portal's address for the organization" }) });
