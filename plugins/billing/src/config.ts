// The billing plugin's configuration keys (section "billing"). Billing is off until both Stripe
// keys are given.
import { Type, type Static } from '@berth/core';

const PriceId = Type.String({ minLength: 1, maxLength: 255 });
const Plan = Type.Object(
  {
    productId: Type.String({ minLength: 1, maxLength: 255, description: "the plan's Stripe product (getProducts answers it)" }),
    annualProductId: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'a second product for the annual price, when the plan has one' })),
    monthlyPriceId: PriceId,
    annualPriceId: PriceId,
  },
  { additionalProperties: false },
);

const BillingConfig = Type.Object({
  stripeSecretKey: Type.Optional(
    Type.String({
      env: 'BERTH_STRIPE_SECRET_KEY',
      minLength: 1,
      description: "Stripe's secret API key; with stripeWebhookSecret it turns billing on (off: billing.* answers 404 except canCreateMoreServers)",
    }),
  ),
  stripeWebhookSecret: Type.Optional(Type.String({ env: 'BERTH_STRIPE_WEBHOOK_SECRET', minLength: 1, description: 'The signing secret of the webhook endpoint POST /api/stripe/webhook (whsec_…)' })),
  stripeApiUrl: Type.Optional(
    Type.String({
      env: 'BERTH_STRIPE_API_URL',
      minLength: 1,
      maxLength: 2048,
      pattern: '^https?://',
      description: "Where the Stripe SDK sends its calls (absent: Stripe's own API); the tests point it at a loopback stand-in",
    }),
  ),
  stripePlans: Type.Object(
    { legacy: Type.Optional(Plan), hobby: Type.Optional(Plan), startup: Type.Optional(Plan) },
    {
      env: 'BERTH_STRIPE_PLANS',
      default: {},
      additionalProperties: false,
      description:
        'The Stripe products and prices of each tier (JSON in the variable): {"hobby":{"productId","monthlyPriceId","annualPriceId"},…}. A startup subscription is one base price for 3 servers plus the hobby price per server past 3',
    },
  ),
  graceDays: Type.Number({
    env: 'BERTH_BILLING_GRACE_DAYS',
    minimum: 0,
    maximum: 90,
    default: 7,
    description: 'Days a failed payment leaves the servers as they are; after them the newest servers past what is paid for are set inactive',
  }),
  billingReconcileMinutes: Type.Integer({
    env: 'BERTH_BILLING_RECONCILE_MINUTES',
    minimum: 1,
    maximum: 1440,
    default: 60,
    description: "Minutes between two reconciliations: expired grace periods applied, each organization's granted servers compared with its Stripe subscription",
  }),
});
export default BillingConfig;
export type BillingSettings = Static<typeof BillingConfig>;

declare module '@berth/core' {
  interface BerthConfig extends BillingSettings {}
}
