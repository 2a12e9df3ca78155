// The peer's own stripe.* procedures (its web UI's billing page) end to end on a real kernel, the
// real `stripe` SDK pointed at the loopback stand-in (stripe-stand-in.ts), on both wire forms (REST
// and tRPC): billing off answers as a self-hosted peer (no plan, no invoices) and refuses the
// changes (404 "billing is not enabled"); on, getCurrentPlan follows the organization's active
// subscription, getInvoices lists its Stripe invoices in the peer's fields, upgradeSubscription
// moves the subscription to another tier's prices item by item (prorated) while servers follow
// Stripe's events only (fewer at once, more once paid), updateInvoiceNotifications is stored per
// organization and shown on its owner (user.get); members read the plan only; bad input is named
// by its field; another organization sees and changes nothing of it.
import t from 'tap';
import { addMember, otherOrganization, signUpAdmin, startTestServer, type Client, type Reply } from '@berth/core/testing';
import { startBillingStandIn } from './billing-fixture.ts';

t.setTimeout(300_000);
const billing = await startBillingStandIn();
const { stripe } = billing;
t.teardown(() => stripe.close());

const off = await startTestServer({ proxy: 'none', jobs: false } as never);
t.teardown(() => off.destroy());
const server = await startTestServer({ proxy: 'none', jobs: false, ...billing.config } as never);
t.teardown(() => server.destroy());
const admin = await signUpAdmin(server);
const c = admin.client;
const member = await addMember(server, c, 'reader@example.com');

/** The answer's data on either wire form. */
const data = (r: Reply) => (r.body?.result?.data ? r.body.result.data.json : r.body);
/** Both wire forms of one call: REST (GET query string / POST body) and tRPC. */
const both = (client: Client, kind: 'query' | 'mutation', op: string, input?: Record<string, unknown>) =>
  Promise.all([kind === 'query' ? client.get(op, input) : client.post(op, input ?? {}), client.trpc(kind, op, input)]);
const names = (r: Reply, field: string) => r.status === 400 && (r.body?.issues ?? []).some((i: any) => i.path?.[0] === field);

/** Posts an event to the webhook, signed as Stripe signs it. */
async function send(event: Record<string, unknown>) {
  const r = await billing.deliver(c, event);
  if (r.status !== 200) throw new Error(`webhook ${String(event.type)}: ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}
/** The servers the paid invoices granted, as user.get shows them on the owner. */
const granted = async () => (await c.get('user.get')).body.user.serversQuantity as number;
/** The subscription's items as the stand-in holds them: [price, quantity]. */
const itemsOf = (subscriptionId: string) => stripe.subscriptions.get(subscriptionId)!.items.data.map((i: any) => [i.price.id, i.quantity]);

t.test('billing off: no plan, no invoices (as a self-hosted peer), and the changes are 404', async t => {
  const a = await signUpAdmin(off);
  for (const r of await both(a.client, 'query', 'stripe.getCurrentPlan')) t.match({ status: r.status, plan: data(r) }, { status: 200, plan: null }, 'getCurrentPlan: null');
  for (const r of await both(a.client, 'query', 'stripe.getInvoices')) t.same({ status: r.status, invoices: data(r) }, { status: 200, invoices: [] }, 'getInvoices: []');
  for (const r of await both(a.client, 'mutation', 'stripe.upgradeSubscription', { tier: 'hobby', serverQuantity: 1, isAnnual: false }))
    t.match(r, { status: 404, body: { message: 'billing is not enabled' } });
  for (const r of await both(a.client, 'mutation', 'stripe.updateInvoiceNotifications', { enabled: true })) t.match(r, { status: 404, body: { message: 'billing is not enabled' } });
  t.equal((await a.client.get('user.get')).body.user.sendInvoiceNotifications, false);
});

let subscriptionId = '';
let firstInvoice = '';

t.test('before a subscription: no plan, no invoices, nothing to upgrade; invoice notifications stored', async t => {
  t.equal(data((await both(c, 'query', 'stripe.getCurrentPlan'))[1]), null);
  t.same(data((await both(c, 'query', 'stripe.getInvoices'))[1]), []);
  const upgrade = await c.post('stripe.upgradeSubscription', { tier: 'hobby', serverQuantity: 2, isAnnual: false });
  t.match(upgrade, { status: 400, body: { message: /^No active subscription found/ } });

  for (const [i, enabled] of [true, false, true].entries()) {
    const reply = i === 1 ? await c.trpc('mutation', 'stripe.updateInvoiceNotifications', { enabled }) : await c.post('stripe.updateInvoiceNotifications', { enabled });
    t.same(data(reply), { ok: true });
    t.equal((await c.get('user.get')).body.user.sendInvoiceNotifications, enabled, `user.get shows ${enabled} on the owner`);
  }
});

t.test('getCurrentPlan and getInvoices follow the subscription, on both wire forms', async t => {
  const checkout = await c.post('stripe.createCheckoutSession', { tier: 'hobby', productId: 'prod_hobby', serverQuantity: 2, isAnnual: false });
  t.equal(checkout.status, 200, JSON.stringify(checkout.body));
  const done = stripe.completeCheckout(checkout.body.sessionId);
  subscriptionId = done.subscription.id;
  firstInvoice = done.invoice.id;
  await send(stripe.event('checkout.session.completed', done.session));
  t.equal(data((await both(c, 'query', 'stripe.getCurrentPlan'))[0]), null, 'an incomplete subscription is no plan');
  const open = (await c.get('stripe.getInvoices')).body;
  t.match(open, [{ id: firstInvoice, status: 'open', amountDue: 900, amountPaid: 0 }], 'the first invoice, open');

  await send(stripe.event('invoice.paid', stripe.pay(firstInvoice)));
  t.equal(await granted(), 2);
  for (const r of await both(c, 'query', 'stripe.getCurrentPlan')) t.equal(data(r), 'hobby', 'hobby, from the price');
  for (const r of await both(member.client, 'query', 'stripe.getCurrentPlan')) t.equal(data(r), 'hobby', 'a member reads the plan');
  for (const r of await both(c, 'query', 'stripe.getInvoices')) {
    t.equal(r.status, 200);
    t.same(data(r), [
      {
        id: firstInvoice,
        number: stripe.invoices.get(firstInvoice)!.number,
        status: 'paid',
        amountDue: 900,
        amountPaid: 900,
        currency: 'usd',
        created: stripe.invoices.get(firstInvoice)!.created,
        dueDate: null,
        hostedInvoiceUrl: `https://invoice.stripe.test/i/${firstInvoice}`,
        invoicePdf: `https://pay.stripe.test/invoice/${firstInvoice}/pdf`,
      },
    ]);
  }
  t.match(stripe.requests.filter(r => r.path === '/v1/invoices').at(-1), { method: 'GET', query: { customer: done.subscription.customer, limit: '100' } }, "the organization's customer, 100 at most");
  for (const r of await both(member.client, 'query', 'stripe.getInvoices')) t.equal(r.status, 403, 'invoices are for admins');
});

t.test('upgradeSubscription: the prices change item by item, servers follow Stripe', async t => {
  for (const r of await both(member.client, 'mutation', 'stripe.upgradeSubscription', { tier: 'startup', serverQuantity: 5, isAnnual: false })) t.equal(r.status, 403, 'a member does not');

  const up = await c.post('stripe.upgradeSubscription', { tier: 'startup', serverQuantity: 5, isAnnual: false });
  t.match(up, { status: 200, body: { ok: true } }, JSON.stringify(up.body));
  t.same(
    itemsOf(subscriptionId),
    [
      ['price_startup_m', 1],
      ['price_hobby_m', 2],
    ],
    'startup: one base price for 3 servers, the hobby price for the 2 past them',
  );
  const update = stripe.requests.filter(r => r.method === 'POST' && r.path === `/v1/subscriptions/${subscriptionId}`).at(-1)!;
  t.match(update.body, {
    proration_behavior: 'create_prorations',
    items: [
      { id: /^si_/, price: 'price_startup_m', quantity: '1' },
      { price: 'price_hobby_m', quantity: '2' },
    ],
  });
  t.notOk(update.body.items[1].id, 'the second item is added');
  t.equal(data((await both(c, 'query', 'stripe.getCurrentPlan'))[1]), 'startup');
  t.equal(await granted(), 2, 'nothing granted by the change itself');
  await send(stripe.event('customer.subscription.updated', stripe.subscriptions.get(subscriptionId)!));
  t.equal(await granted(), 2, 'a larger subscription waits for its paid invoice');
  await send(stripe.event('invoice.paid', stripe.pay(stripe.failRenewal(subscriptionId).id)));
  t.equal(await granted(), 5, 'the paid invoice grants the five');

  const [down] = await both(c, 'mutation', 'stripe.upgradeSubscription', { tier: 'hobby', serverQuantity: 1, isAnnual: true });
  t.same(data(down), { ok: true });
  t.same(itemsOf(subscriptionId), [['price_hobby_y', 1]], "hobby, annual: the first item's price changed, the second deleted");
  await send(stripe.event('customer.subscription.updated', stripe.subscriptions.get(subscriptionId)!));
  t.equal(await granted(), 1, 'a smaller subscription lowers the grant at once');
  t.equal(data((await c.trpc('query', 'stripe.getCurrentPlan')) as Reply), 'hobby');
  t.match((await c.get('stripe.getProducts')).body, { currentPlan: 'hobby', isAnnualCurrent: true });
});

t.test('upgradeSubscription: bad input named, an unpaid subscription refused', async t => {
  const good = { tier: 'startup', serverQuantity: 3, isAnnual: false };
  const before = stripe.requests.length;
  t.match(await c.post('stripe.upgradeSubscription', { ...good, serverQuantity: 2 }), { status: 400, body: { issues: [{ path: ['serverQuantity'], message: /at least 3 servers/ }] } });
  t.ok(names(await c.post('stripe.upgradeSubscription', { ...good, tier: 'legacy' }), 'tier'), 'tier: hobby or startup');
  t.ok(names(await c.post('stripe.upgradeSubscription', { ...good, serverQuantity: 0 }), 'serverQuantity'), 'serverQuantity: at least 1');
  t.ok(names(await c.post('stripe.upgradeSubscription', { ...good, serverQuantity: 1.5 }), 'serverQuantity'), 'serverQuantity: whole');
  t.ok(names(await c.post('stripe.upgradeSubscription', { ...good, serverQuantity: 1e9 }), 'serverQuantity'), 'serverQuantity: at most 10,000');
  t.ok(names(await c.post('stripe.upgradeSubscription', { tier: 'hobby', serverQuantity: 1 }), 'isAnnual'), 'isAnnual: required');
  t.ok(names(await c.trpc('mutation', 'stripe.upgradeSubscription', { ...good, tier: 'x'.repeat(300) }), 'tier'), 'the tRPC form names it too');
  t.ok(names(await c.post('stripe.updateInvoiceNotifications', { enabled: 'yes' }), 'enabled'), 'enabled: a boolean');
  t.ok(names(await c.post('stripe.updateInvoiceNotifications', {}), 'enabled'), 'enabled: required');
  t.equal(stripe.requests.length, before, 'nothing reached Stripe');

  stripe.failRenewal(subscriptionId);
  const unpaid = await c.post('stripe.upgradeSubscription', good);
  t.match(unpaid, { status: 400, body: { message: /^Subscription is not active \(Stripe says past_due\)/ } });
  t.same(itemsOf(subscriptionId), [['price_hobby_y', 1]], 'unchanged');
});

t.test('another organization sees and changes nothing of it', async t => {
  const other = await otherOrganization(server, admin.userId);
  const o = other.client;
  for (const r of await both(o, 'query', 'stripe.getCurrentPlan')) t.equal(data(r), null);
  for (const r of await both(o, 'query', 'stripe.getInvoices')) t.same(data(r), []);
  for (const r of await both(o, 'mutation', 'stripe.upgradeSubscription', { tier: 'hobby', serverQuantity: 3, isAnnual: false }))
    t.match(r, { status: 400, body: { message: /^No active subscription found/ } });
  t.same(itemsOf(subscriptionId), [['price_hobby_y', 1]], "the first organization's subscription is untouched");
  t.same(data((await both(o, 'mutation', 'stripe.updateInvoiceNotifications', { enabled: false }))[1]), { ok: true });
  t.equal((await c.get('user.get')).body.user.sendInvoiceNotifications, true, "the first organization's choice stands");
  t.equal((await o.get('user.get')).body.user.sendInvoiceNotifications, false, 'the other one has its own');
});
