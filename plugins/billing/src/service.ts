// Billing per organization through Stripe (the `stripe` SDK, imported on first use). Off until
// both keys are configured: then every operation but canCreateMoreServers is NOT_FOUND. Servers
// are granted by a paid invoice only (never by a checkout event); a failed payment starts a grace
// period, after which the newest servers past what is paid for are set inactive with billing as
// the reason on their record (deploys to them are refused by the server plugin, and server.update
// cannot set them active); a payment sets active again exactly the servers billing set inactive.
// A plan change (stripe.upgradeSubscription) grants nothing by itself: Stripe's events for it do.
// Stripe's errors are converted here, never answered raw.
import type { Stripe as StripeClient } from 'stripe';
import { BerthError, badRequest, forbidden, invalidField, User, type Cradle, type EntityManager } from '@berth/core';
import { BillingAccount, BillingEvent, type BillingAccountRow } from './entities.ts';
import { STARTUP_SERVERS_INCLUDED, type CheckoutInput, type InvoiceView, type ProductsView, type Tier, type UpgradeInput } from './schemas.ts';

const DAY_MS = 86_400_000;
// Types only: the SDK itself is imported on first use (see stripe()); its API version is the SDK's own.
type Subscription = StripeClient.Subscription;
type Invoice = StripeClient.Invoice;

/** The reason billing writes on the servers it sets inactive (server.update cannot lift it). */
export const BILLING_REASON = 'billing';

export const disabled = () => new BerthError('NOT_FOUND', 'billing is not enabled');

/** What one webhook call did, as the route answers it. */
export interface WebhookOutcome {
  received: true;
  /** The event was handled before: nothing changed. */
  duplicate?: true;
  /** The event type (or its organization) is not one billing acts on. */
  ignored?: true;
}

export class BillingService {
  readonly #cradle: () => Cradle;
  #client: Promise<StripeClient> | undefined;

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
  }

  get #config() {
    return this.#cradle().config;
  }

  /** Both Stripe keys are configured. */
  get enabled(): boolean {
    return Boolean(this.#config.stripeSecretKey && this.#config.stripeWebhookSecret);
  }

  /** Runs fn while billing is on; NOT_FOUND "billing is not enabled" otherwise. */
  whenEnabled<T>(fn: () => Promise<T>): Promise<T> {
    return this.enabled ? fn() : Promise.reject(disabled());
  }

  #now(): Date {
    return new Date(this.#cradle().clock.now());
  }

  /** The SDK's client, made on first use (the SDK is not loaded before). */
  stripe(): Promise<StripeClient> {
    if (!this.enabled) return Promise.reject(disabled());
    this.#client ??= import('stripe').then(({ default: Stripe }) => {
      const url = this.#config.stripeApiUrl ? new URL(this.#config.stripeApiUrl) : null;
      const where = url ? { host: url.hostname, port: Number(url.port || (url.protocol === 'http:' ? 80 : 443)), protocol: url.protocol.replace(':', '') as 'http' | 'https' } : {};
      return new Stripe(this.#config.stripeSecretKey!, { maxNetworkRetries: 1, timeout: 20_000, telemetry: false, ...where });
    });
    return this.#client;
  }

  /** Calls Stripe; its errors become a 400 quoting its status and message (a connection failure: 503). */
  async #call<T>(what: string, fn: (stripe: StripeClient) => Promise<T>): Promise<T> {
    const stripe = await this.stripe();
    try {
      return await fn(stripe);
    } catch (e) {
      const err = e as { type?: string; statusCode?: number; message?: string };
      if (err.type === 'StripeConnectionError') throw new BerthError('SERVICE_UNAVAILABLE', `Stripe could not be reached (${what}): ${err.message ?? 'no answer'}`);
      if (typeof err.type === 'string' && err.type.startsWith('Stripe')) throw badRequest(`Stripe answered ${err.statusCode ?? 'an error'} (${what}): ${err.message ?? err.type}`);
      throw e;
    }
  }

  async account(organizationId: string, em: EntityManager): Promise<BillingAccountRow | null> {
    return em.findOne(BillingAccount, { organizationId });
  }

  /** The fields the peer keeps on the owner's user row; null while billing is off or the organization has no account. */
  async userFields(organizationId: string): Promise<{ stripeCustomerId: string | null; stripeSubscriptionId: string | null; serversQuantity: number; sendInvoiceNotifications: boolean } | null> {
    if (!this.enabled) return null;
    const account = await this.account(organizationId, this.#cradle().orm.em.fork() as EntityManager);
    return (
      account && {
        stripeCustomerId: account.stripeCustomerId ?? null,
        stripeSubscriptionId: account.stripeSubscriptionId ?? null,
        serversQuantity: account.serversQuantity,
        sendInvoiceNotifications: account.sendInvoiceNotifications,
      }
    );
  }

  async #accountFor(organizationId: string, em: EntityManager): Promise<BillingAccountRow> {
    const found = await this.account(organizationId, em);
    if (found) return found;
    return em.create(BillingAccount, {
      organizationId,
      stripeCustomerId: null,
      stripeSubscriptionId: null,
      serversQuantity: 0,
      paymentFailedAt: null,
      graceUntil: null,
      deactivatedServerIds: [],
      sendInvoiceNotifications: false,
      updatedAt: this.#now(),
    });
  }

  // ------------------------------------------------------------ billing.* / stripe.*
  /** The configured tiers' products, the organization's active subscription and what plan it is. */
  async products(organizationId: string, em: EntityManager): Promise<ProductsView> {
    const plans = this.#config.stripePlans;
    const productIds = Object.values(plans).flatMap(p => (p ? [p.productId, ...(p.annualProductId ? [p.annualProductId] : [])] : []));
    const listed = await this.#call('products.list', s => s.products.list({ active: true, expand: ['data.default_price'], limit: 100 }));
    const products = listed.data.filter(p => productIds.includes(p.id));
    // casts: the answer's schema declares Stripe's objects loosely; the SDK's types are exact.
    const base = { products: products as never[], subscriptions: [] as never[], hobbyProductId: plans.hobby?.productId, startupProductId: plans.startup?.productId };
    const customer = (await this.account(organizationId, em))?.stripeCustomerId;
    if (!customer) return { ...base, currentPlan: null, isAnnualCurrent: false, currentPriceAmount: null };
    const subs = await this.#activeSubscriptions(customer);
    const active = subs[0];
    const items = active?.items.data ?? [];
    return {
      ...base,
      subscriptions: subs as never[], // cast: as above
      currentPlan: active ? (this.#tierOf(active) ?? 'legacy') : null,
      isAnnualCurrent: items[0]?.price.recurring?.interval === 'year',
      currentPriceAmount: active ? items.reduce((sum, i) => sum + (i.price.unit_amount ?? 0) * (i.quantity ?? 1), 0) / 100 : null,
    };
  }

  /** The customer's active subscriptions, their prices expanded. */
  async #activeSubscriptions(customer: string): Promise<Subscription[]> {
    return (await this.#call('subscriptions.list', s => s.subscriptions.list({ customer, status: 'active', expand: ['data.items.data.price'] }))).data;
  }

  /** The configured tier whose price the subscription carries (startup first, as a startup subscription carries hobby prices too); undefined for none. */
  #tierOf(subscription: Subscription): Tier | undefined {
    const plans = this.#config.stripePlans;
    const priceIds = subscription.items.data.map(i => i.price.id);
    return (['startup', 'hobby', 'legacy'] as const).find(t => plans[t] && priceIds.some(id => id === plans[t]!.monthlyPriceId || id === plans[t]!.annualPriceId));
  }

  /** stripe.getCurrentPlan: the tier of the organization's active subscription; null while billing is off (as the self-hosted peer), before a subscription, or for prices of no configured tier. */
  async currentPlan(organizationId: string, em: EntityManager): Promise<Tier | null> {
    if (!this.enabled) return null;
    const customer = (await this.account(organizationId, em))?.stripeCustomerId;
    const active = customer ? (await this.#activeSubscriptions(customer))[0] : undefined;
    return (active && this.#tierOf(active)) ?? null;
  }

  /** stripe.getInvoices: the customer's last 100 invoices, newest first, as Stripe lists them; [] while billing is off (as the self-hosted peer) or before a checkout. */
  async invoices(organizationId: string, em: EntityManager): Promise<InvoiceView[]> {
    if (!this.enabled) return [];
    const customer = (await this.account(organizationId, em))?.stripeCustomerId;
    if (!customer) return [];
    const listed = await this.#call('invoices.list', s => s.invoices.list({ customer, limit: 100 }));
    return listed.data.map(i => ({
      id: i.id!,
      number: i.number ?? null,
      status: i.status ?? null,
      amountDue: i.amount_due,
      amountPaid: i.amount_paid,
      currency: i.currency,
      created: i.created,
      dueDate: i.due_date ?? null,
      hostedInvoiceUrl: i.hosted_invoice_url ?? null,
      invoicePdf: i.invoice_pdf ?? null,
    }));
  }

  /**
   * stripe.upgradeSubscription: the organization's subscription gets the tier's prices for
   * serverQuantity servers (prorated), item by item as the peer does. Nothing is granted here:
   * Stripe's customer.subscription.updated lowers the grant at once, a paid invoice raises it.
   */
  async upgrade(input: UpgradeInput, organizationId: string, em: EntityManager): Promise<{ ok: true }> {
    if (!this.enabled) throw disabled();
    if (input.tier === 'startup' && input.serverQuantity < STARTUP_SERVERS_INCLUDED) throw invalidField('serverQuantity', `Startup plan requires at least ${STARTUP_SERVERS_INCLUDED} servers`);
    const wanted = this.#items(input.tier, input.serverQuantity, input.isAnnual);
    const subscriptionId = (await this.account(organizationId, em))?.stripeSubscriptionId;
    if (!subscriptionId) throw badRequest('No active subscription found: the organization has not subscribed yet (stripe.createCheckoutSession)');
    const subscription = await this.#call('subscriptions.retrieve', s => s.subscriptions.retrieve(subscriptionId, { expand: ['items.data.price'] }));
    if (subscription.status !== 'active' && subscription.status !== 'trialing') {
      throw badRequest(`Subscription is not active (Stripe says ${subscription.status}): pay its open invoice first (stripe.createCustomerPortalSession)`);
    }
    const current = subscription.items.data;
    const items: StripeClient.SubscriptionUpdateParams.Item[] = [
      ...current.map((item, i) => (wanted[i] ? { id: item.id, price: wanted[i].price, quantity: wanted[i].quantity } : { id: item.id, deleted: true })),
      ...wanted.slice(current.length),
    ];
    await this.#call('subscriptions.update', s => s.subscriptions.update(subscriptionId, { items, proration_behavior: 'create_prorations' }));
    return { ok: true };
  }

  /** stripe.updateInvoiceNotifications: stored per organization and shown on its owner's user (user.get); Stripe's own settings say who gets its e-mails. */
  async setInvoiceNotifications(enabled: boolean, organizationId: string, em: EntityManager): Promise<{ ok: true }> {
    if (!this.enabled) throw disabled();
    // One statement: two first calls at once must not both insert the organization's account.
    await em.getConnection().execute(
      `insert into "billing_accounts" ("organization_id", "servers_quantity", "deactivated_server_ids", "send_invoice_notifications", "updated_at") values (?, 0, '[]', ?, ?)
         on conflict ("organization_id") do update set "send_invoice_notifications" = excluded."send_invoice_notifications", "updated_at" = excluded."updated_at"`,
      [organizationId, enabled, this.#now()],
      'run',
      em.getTransactionContext(),
    );
    return { ok: true };
  }

  /** A Checkout session for a subscription of the tier's prices; nothing is granted until its invoice is paid. */
  async checkout(input: CheckoutInput, organizationId: string, userId: string, origin: string, em: EntityManager): Promise<{ sessionId: string }> {
    if (!this.enabled) throw disabled();
    if (input.tier === 'startup' && input.serverQuantity < STARTUP_SERVERS_INCLUDED) throw invalidField('serverQuantity', `Startup plan requires at least ${STARTUP_SERVERS_INCLUDED} servers`);
    const line_items = this.#items(input.tier, input.serverQuantity, input.isAnnual);
    const account = await this.#accountFor(organizationId, em);
    if (account.stripeCustomerId) {
      const customer = await this.#call('customers.retrieve', s => s.customers.retrieve(account.stripeCustomerId!));
      if ((customer as { deleted?: boolean }).deleted) account.stripeCustomerId = null;
    }
    const email = account.stripeCustomerId ? undefined : ((await em.findOne(User, { id: userId }, { fields: ['email'] }))?.email ?? undefined);
    await em.flush();
    const session = await this.#call('checkout.sessions.create', s =>
      s.checkout.sessions.create({
        mode: 'subscription',
        line_items,
        ...(account.stripeCustomerId ? { customer: account.stripeCustomerId, customer_update: { name: 'auto', address: 'auto' } } : email ? { customer_email: email } : {}),
        client_reference_id: organizationId,
        metadata: { organizationId },
        subscription_data: { metadata: { organizationId } },
        billing_address_collection: 'required',
        tax_id_collection: { enabled: true },
        allow_promotion_codes: true,
        success_url: `${origin}/dashboard/settings/servers?success=true`,
        cancel_url: `${origin}/dashboard/settings/billing`,
      }),
    );
    return { sessionId: session.id };
  }

  /** The Stripe customer portal of the organization's customer. */
  async portal(organizationId: string, origin: string, em: EntityManager): Promise<{ url: string }> {
    if (!this.enabled) throw disabled();
    const customer = (await this.account(organizationId, em))?.stripeCustomerId;
    if (!customer) throw badRequest('Stripe Customer ID not found: the organization has not subscribed yet (billing.createCheckoutSession)');
    const session = await this.#call('billingPortal.sessions.create', s => s.billingPortal.sessions.create({ customer, return_url: `${origin}/dashboard/settings/billing` }));
    return { url: session.url };
  }

  /** Billing off: always. On: while the organization has fewer servers than it is granted. */
  async canCreateMoreServers(organizationId: string, em: EntityManager): Promise<boolean> {
    if (!this.enabled) return true;
    const granted = (await this.account(organizationId, em))?.serversQuantity ?? 0;
    return (await this.#cradle().servers.count(organizationId, em)) < granted;
  }

  /** server.create's check: FORBIDDEN past the granted quantity while billing is on. */
  async checkServerQuota(organizationId: string, em: EntityManager): Promise<void> {
    if (!this.enabled) return;
    const granted = (await this.account(organizationId, em))?.serversQuantity ?? 0;
    const count = await this.#cradle().servers.count(organizationId, em);
    if (count >= granted)
      throw forbidden(`The organization's plan allows ${granted} server(s) and it has ${count}: buy more with billing.createCheckoutSession (servers are granted once the invoice is paid)`);
  }

  #items(tier: Tier, quantity: number, annual: boolean): { price: string; quantity: number }[] {
    const plans = this.#config.stripePlans;
    const plan = plans[tier];
    if (!plan) throw invalidField('tier', `The tier ${tier} is not offered on this instance (billing.stripePlans has no ${tier} plan)`);
    const price = (p: NonNullable<typeof plan>) => (annual ? p.annualPriceId : p.monthlyPriceId);
    if (tier !== 'startup') return [{ price: price(plan), quantity }];
    const extra = quantity - STARTUP_SERVERS_INCLUDED;
    if (extra > 0 && !plans.hobby) throw invalidField('serverQuantity', `Servers past ${STARTUP_SERVERS_INCLUDED} on the startup tier are hobby prices, and billing.stripePlans has no hobby plan`);
    return [{ price: price(plan), quantity: 1 }, ...(extra > 0 ? [{ price: price(plans.hobby!), quantity: extra }] : [])];
  }

  /** Servers a subscription pays for: a startup base price counts for three, any other item its quantity. */
  serversOf(subscription: Subscription): number {
    const startup = this.#config.stripePlans.startup;
    return subscription.items.data.reduce((sum, item) => {
      if (startup && (item.price.id === startup.monthlyPriceId || item.price.id === startup.annualPriceId)) return sum + STARTUP_SERVERS_INCLUDED;
      return sum + (item.quantity ?? 0);
    }, 0);
  }

  // ------------------------------------------------------------ the webhook
  /**
   * One signed Stripe event (the raw body and its Stripe-Signature header). The event id is logged
   * in the same transaction as what the event changes, so a replay (or a concurrent delivery)
   * changes nothing.
   */
  async webhook(body: Buffer, signature: string | undefined): Promise<WebhookOutcome> {
    if (!this.enabled) throw disabled();
    const stripe = await this.stripe();
    let event: StripeClient.Event;
    try {
      event = stripe.webhooks.constructEvent(body, signature ?? '', this.#config.stripeWebhookSecret!);
    } catch (e) {
      throw badRequest(`Webhook Error: the Stripe-Signature does not verify (${(e as Error).message.split('\n')[0]})`);
    }
    const em = this.#cradle().orm.em.fork() as EntityManager;
    return em.transactional(async tx => {
      const inserted = await tx
        .getConnection()
        .execute<{ event_id: string }[]>(
          'insert into "billing_events" ("event_id", "type", "received_at") values (?, ?, ?) on conflict do nothing returning "event_id"',
          [event.id, event.type, this.#now()],
          'all',
          tx.getTransactionContext(),
        );
      if (!inserted.length) return { received: true, duplicate: true } as const;
      const organizationId = await this.#handle(event, tx as EntityManager);
      if (organizationId) await tx.nativeUpdate(BillingEvent, { eventId: event.id }, { organizationId });
      return organizationId ? { received: true } : ({ received: true, ignored: true } as const);
    });
  }

  /** Acts on one event; answers the organization it concerned (null: ignored). */
  async #handle(event: StripeClient.Event, em: EntityManager): Promise<string | null> {
    const log = this.#cradle().logger;
    switch (event.type) {
      case 'checkout.session.completed': {
        // Links the organization to its customer and subscription; grants nothing (the invoice does).
        const session = event.data.object;
        const organizationId = session.metadata?.organizationId ?? session.client_reference_id;
        if (!organizationId || !(await this.#organizationExists(organizationId, em))) return null;
        const account = await this.#accountFor(organizationId, em);
        if (typeof session.customer === 'string') account.stripeCustomerId = session.customer;
        if (typeof session.subscription === 'string') account.stripeSubscriptionId = session.subscription;
        account.updatedAt = this.#now();
        await em.flush();
        return organizationId;
      }
      case 'invoice.paid':
      case 'invoice.payment_succeeded': {
        const invoice = event.data.object;
        const account = await this.#accountOf(invoice.customer, em);
        const subscriptionId = subscriptionOf(invoice);
        if (!account || !subscriptionId || invoice.status !== 'paid') return null;
        const subscription = await this.#call('subscriptions.retrieve', s => s.subscriptions.retrieve(subscriptionId));
        account.stripeSubscriptionId = subscription.id;
        await this.#grant(account, this.serversOf(subscription), em);
        return account.organizationId;
      }
      case 'invoice.payment_failed': {
        const account = await this.#accountOf(event.data.object.customer, em);
        if (!account) return null;
        this.#startGrace(account);
        await em.flush();
        log.info({ organizationId: account.organizationId, graceUntil: account.graceUntil }, 'a Stripe payment failed: grace period');
        if (account.graceUntil! <= this.#now()) await this.#expireGrace(account, em);
        return account.organizationId;
      }
      case 'customer.subscription.updated':
      case 'customer.subscription.deleted': {
        const subscription = event.data.object;
        const account = await this.#accountOf(subscription.customer, em);
        if (!account) return null;
        if (event.type === 'customer.subscription.deleted' || ['canceled', 'unpaid', 'incomplete_expired'].includes(subscription.status)) {
          if (account.stripeSubscriptionId === subscription.id) account.stripeSubscriptionId = null;
          await this.#grant(account, 0, em, { keepGrace: false });
        } else if (subscription.status === 'active') {
          // A smaller subscription applies at once; a larger one waits for its paid invoice.
          account.stripeSubscriptionId = subscription.id;
          await this.#grant(account, Math.min(account.serversQuantity, this.serversOf(subscription)), em, { keepGrace: true });
        }
        return account.organizationId;
      }
      case 'customer.deleted': {
        const account = await this.#accountOf(event.data.object.id, em);
        if (!account) return null;
        account.stripeCustomerId = null;
        account.stripeSubscriptionId = null;
        await this.#grant(account, 0, em, { keepGrace: false });
        return account.organizationId;
      }
      default:
        return null;
    }
  }

  async #organizationExists(organizationId: string, em: EntityManager): Promise<boolean> {
    const [row] = await em.getConnection().execute<unknown[]>('select 1 from "organizations" where "id" = ?', [organizationId], 'all', em.getTransactionContext());
    return Boolean(row);
  }

  async #accountOf(customer: string | { id: string } | null | undefined, em: EntityManager): Promise<BillingAccountRow | null> {
    const id = typeof customer === 'string' ? customer : customer?.id;
    return id ? em.findOne(BillingAccount, { stripeCustomerId: id }) : null;
  }

  #startGrace(account: BillingAccountRow): void {
    if (account.graceUntil) return;
    const now = this.#now();
    account.paymentFailedAt = now;
    account.graceUntil = new Date(now.getTime() + this.#config.graceDays * DAY_MS);
    account.updatedAt = now;
  }

  /** The grace period is over: what Stripe says is paid now stands (an unpaid subscription: nothing). */
  async #expireGrace(account: BillingAccountRow, em: EntityManager): Promise<void> {
    const subscriptionId = account.stripeSubscriptionId;
    const subscription = subscriptionId ? await this.#call('subscriptions.retrieve', s => s.subscriptions.retrieve(subscriptionId, { expand: ['latest_invoice'] })) : null;
    const paid = subscription?.status === 'active' && (subscription.latest_invoice as Invoice | null)?.status === 'paid';
    this.#cradle().logger.info({ organizationId: account.organizationId, paid }, 'billing grace period over');
    await this.#grant(account, paid ? this.serversOf(subscription) : 0, em, { keepGrace: false });
  }

  /**
   * Sets the granted quantity and applies it: the servers past it, newest first, are set inactive;
   * servers billing had set inactive are set active again, oldest first, while the quantity allows.
   * A payment (keepGrace unset) ends the grace period.
   */
  async #grant(account: BillingAccountRow, quantity: number, em: EntityManager, o: { keepGrace?: boolean } = {}): Promise<void> {
    account.serversQuantity = quantity;
    if (!o.keepGrace) {
      account.graceUntil = null;
      account.paymentFailedAt = null;
    }
    account.updatedAt = this.#now();
    await em.flush();
    // While a grace period runs, nothing is set inactive for want of payment.
    if (account.graceUntil) return;
    const servers = this.#cradle().servers;
    const oldestFirst = (await servers.all(account.organizationId, em)).reverse();
    const ours = new Set(account.deactivatedServerIds);
    for (const [index, server] of oldestFirst.entries()) {
      const keep = index < quantity;
      if (!keep && (server.serverStatus === 'active' || ours.has(server.serverId))) {
        // The reason on the record: server.update cannot set it active while billing holds it.
        await servers.setStatusFor(BILLING_REASON, server.serverId, account.organizationId, 'inactive', em);
        ours.add(server.serverId);
      } else if (keep && ours.has(server.serverId)) {
        await servers.setStatusFor(BILLING_REASON, server.serverId, account.organizationId, 'active', em);
        ours.delete(server.serverId);
      }
    }
    const present = new Set(oldestFirst.map(s => s.serverId));
    account.deactivatedServerIds = [...ours].filter(id => present.has(id));
    await em.flush();
  }

  /**
   * At start: servers an earlier Berth set inactive for billing (listed on the account only, before
   * the server record kept a reason) get billing's reason on their record. Changes nothing twice.
   */
  async markHeldServers(): Promise<void> {
    const em = this.#cradle().orm.em.fork() as EntityManager;
    for (const account of await em.find(BillingAccount, {}, { orderBy: { organizationId: 'asc' } })) {
      for (const serverId of account.deactivatedServerIds) {
        const server = await this.#cradle()
          .servers.owned(serverId, account.organizationId, em)
          .catch(() => null);
        if (server?.serverStatus === 'inactive') await this.#cradle().servers.setStatusFor(BILLING_REASON, serverId, account.organizationId, 'inactive', em);
      }
    }
  }

  // ------------------------------------------------------------ reconcile
  /**
   * Compares each organization's subscription with what it is granted (an event Berth missed:
   * an active subscription whose latest invoice is paid grants its servers; an ended one nothing;
   * a past-due one starts the grace period), then applies the grace periods that are over.
   * Answers the organizations whose quantity changed.
   */
  async reconcile(): Promise<{ organizationId: string; from: number; to: number }[]> {
    if (!this.enabled) return [];
    const changed: { organizationId: string; from: number; to: number }[] = [];
    const em = this.#cradle().orm.em.fork() as EntityManager;
    for (const account of await em.find(BillingAccount, {}, { orderBy: { organizationId: 'asc' } })) {
      const from = account.serversQuantity;
      try {
        await em.transactional(async tx => {
          const row = (await tx.findOne(BillingAccount, { organizationId: account.organizationId }))!;
          if (row.stripeSubscriptionId) {
            const subscription = await this.#call('subscriptions.retrieve', s => s.subscriptions.retrieve(row.stripeSubscriptionId!, { expand: ['latest_invoice'] }));
            const invoice = subscription.latest_invoice as Invoice | null;
            if (subscription.status === 'active' && invoice?.status === 'paid') {
              if (row.graceUntil || row.serversQuantity !== this.serversOf(subscription)) await this.#grant(row, this.serversOf(subscription), tx as EntityManager);
            } else if (['canceled', 'unpaid', 'incomplete_expired'].includes(subscription.status)) {
              await this.#grant(row, 0, tx as EntityManager);
            } else if (subscription.status === 'past_due') {
              this.#startGrace(row);
            }
          }
          if (row.graceUntil && row.graceUntil <= this.#now()) await this.#expireGrace(row, tx as EntityManager);
          await tx.flush();
          if (row.serversQuantity !== from) changed.push({ organizationId: row.organizationId, from, to: row.serversQuantity });
        });
      } catch (e) {
        this.#cradle().logger.warn({ err: e, organizationId: account.organizationId }, 'billing reconcile failed for an organization');
      }
    }
    return changed;
  }
}

/** The subscription an invoice bills (the field moved under `parent` in Stripe's 2025 API versions). */
function subscriptionOf(invoice: Invoice): string | null {
  // cast: the SDK's types no longer declare the field older API versions send.
  const legacy = (invoice as unknown as { subscription?: string | { id: string } | null }).subscription;
  const sub = invoice.parent?.subscription_details?.subscription ?? legacy ?? null;
  return typeof sub === 'string' ? sub : (sub?.id ?? null);
}
