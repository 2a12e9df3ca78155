// What the billing suites (billing.test.ts, stripe-peer.test.ts) share: a Stripe stand-in selling two
// tiers, the config keys that point Berth at it, and webhook deliveries signed as Stripe signs them.
// Each suite starts its own (its own servers and subscriptions). Test-only.
import Stripe from 'stripe';
import type { Client, Reply } from '@berth/core/testing';
import { startStripeStandIn, type StripeStandIn } from './stripe-stand-in.ts';

type Obj = Record<string, any>;

const SECRET_KEY = 'sk_test_berth_0123456789';
const WEBHOOK_SECRET = 'whsec_berth_test_secret';

/** The tiers Berth sells in these suites, as the config's stripePlans names them. */
const PLANS = {
  hobby: { productId: 'prod_hobby', monthlyPriceId: 'price_hobby_m', annualPriceId: 'price_hobby_y' },
  startup: { productId: 'prod_startup', monthlyPriceId: 'price_startup_m', annualPriceId: 'price_startup_y' },
};

export interface BillingStandIn {
  stripe: StripeStandIn;
  /** Berth's config keys for the stand-in and PLANS (spread into startTestServer's options). */
  config: { stripeSecretKey: string; stripeWebhookSecret: string; stripeApiUrl: string; stripePlans: typeof PLANS };
  /** Posts an event to the client's server's webhook, signed as Stripe signs it (or with the signature given). */
  deliver(client: Client, event: Obj, signature?: string): Promise<Reply>;
}

/** A stand-in selling PLANS' products and prices, and `others` besides (which are no plan: Berth must not offer them). */
export async function startBillingStandIn(others: { products: Obj[]; prices: Obj[] } = { products: [], prices: [] }): Promise<BillingStandIn> {
  const stripe = await startStripeStandIn(SECRET_KEY, {
    products: [{ id: 'prod_hobby', name: 'Hobby', default_price: 'price_hobby_m' }, { id: 'prod_startup', name: 'Startup', default_price: 'price_startup_m' }, ...others.products],
    prices: [
      { id: 'price_hobby_m', product: 'prod_hobby', unit_amount: 450, recurring: { interval: 'month' } },
      { id: 'price_hobby_y', product: 'prod_hobby', unit_amount: 4500, recurring: { interval: 'year' } },
      { id: 'price_startup_m', product: 'prod_startup', unit_amount: 1500, recurring: { interval: 'month' } },
      { id: 'price_startup_y', product: 'prod_startup', unit_amount: 15000, recurring: { interval: 'year' } },
      ...others.prices,
    ],
  });
  return {
    stripe,
    config: { stripeSecretKey: SECRET_KEY, stripeWebhookSecret: WEBHOOK_SECRET, stripeApiUrl: stripe.url, stripePlans: PLANS },
    deliver(client, event, signature) {
      const payload = JSON.stringify(event);
      const header = signature ?? Stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
      return client.raw('/api/stripe/webhook', { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': header }, body: payload });
    },
  };
}
