// billing.* and stripe.* end to end on a real kernel, the real `stripe` SDK pointed at a loopback
// stand-in (stripe-stand-in.ts), webhook events signed by the SDK's generateTestHeaderString:
// off by default (404 "billing is not enabled", canCreateMoreServers true); a checkout that is not
// paid grants nothing, a paid invoice grants, server.create past the quantity is FORBIDDEN; a failed
// payment leaves the servers during the grace period, then the newest surplus servers are inactive
// (billing the reason on their record: server.update cannot set them active, 409 naming
// serverStatus while the other fields are stored) and deploys to them refused, a payment restores
// them; a smaller subscription deactivates the
// newest at once; a replayed event changes nothing; a bad signature is a 400; reconcile applies a
// missed payment; another organization sees nothing of it.
import t from 'tap';
import Stripe from 'stripe';
import { manualClock, otherOrganization, signUpAdmin, startTestServer, type TestServer } from '@berth/core/testing';
import { startBillingStandIn } from './billing-fixture.ts';

t.setTimeout(300_000);
const billing = await startBillingStandIn({
  products: [{ id: 'prod_unrelated', name: 'Something else', default_price: 'price_other' }],
  prices: [{ id: 'price_other', product: 'prod_unrelated', unit_amount: 100, recurring: { interval: 'month' } }],
});
const { stripe } = billing;
t.teardown(() => stripe.close());

const off: TestServer = await startTestServer({ proxy: 'none' } as never);
t.teardown(() => off.destroy());
const server: TestServer = await startTestServer({ proxy: 'none', ...billing.config, graceDays: 7 } as never);
t.teardown(() => server.destroy());
const clock = manualClock(server);
const admin = await signUpAdmin(server);
const c = admin.client;
const cradle = server.kernel.container.cradle as any;

/** Posts an event to the webhook, signed as Stripe signs it (or with the signature given). */
const send = (event: Record<string, unknown>, signature?: string) => billing.deliver(c, event, signature);

let n = 0;
const newServer = () => c.post('server.create', { name: `box-${++n}`, description: null, ipAddress: `10.255.1.${n}`, port: 22, username: 'root', sshKeyId: null, serverType: 'deploy' });
/** The organization's servers' statuses, oldest first. */
const statuses = async () => ((await c.get('server.all')).body as any[]).map(s => s.serverStatus).reverse();

t.test('billing off: every operation but canCreateMoreServers is 404 "billing is not enabled"', async t => {
  const a = await signUpAdmin(off);
  for (const router of ['billing', 'stripe']) {
    t.match(await a.client.get(`${router}.getProducts`), { status: 404, body: { code: 'NOT_FOUND', message: 'billing is not enabled' } }, `${router}.getProducts`);
    t.match(await a.client.post(`${router}.createCheckoutSession`, { tier: 'hobby', productId: 'prod_hobby', serverQuantity: 1, isAnnual: false }), {
      status: 404,
      body: { message: 'billing is not enabled' },
    });
    t.match(await a.client.post(`${router}.createCustomerPortalSession`, {}), { status: 404, body: { message: 'billing is not enabled' } });
    t.match(await a.client.get(`${router}.canCreateMoreServers`), { status: 200, body: true });
  }
  t.equal((await a.client.raw('/api/stripe/webhook', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 404, 'no webhook either');
  const created = await a.client.post('server.create', { name: 'free', description: null, ipAddress: '10.255.2.1', port: 22, username: 'root', sshKeyId: null, serverType: 'deploy' });
  t.equal(created.status, 200, 'no quota while billing is off');
});

let subscriptionId = '';
let customerId = '';

t.test('checkout: completed without payment grants nothing, a paid invoice grants', async t => {
  t.equal((await c.get('billing.canCreateMoreServers')).body, false, 'nothing granted yet');
  const refused = await newServer();
  t.match(refused, { status: 403, body: { code: 'FORBIDDEN', message: /allows 0 server\(s\)/ } }, 'server.create past the quantity');

  const products = await c.get('billing.getProducts');
  t.equal(products.status, 200, JSON.stringify(products.body));
  t.same(
    products.body.products.map((p: any) => p.id),
    ['prod_hobby', 'prod_startup'],
    "only the configured tiers' products",
  );
  t.match(products.body, { subscriptions: [], hobbyProductId: 'prod_hobby', startupProductId: 'prod_startup', currentPlan: null, isAnnualCurrent: false, currentPriceAmount: null });
  t.match(products.body.products[0], { default_price: { id: 'price_hobby_m', unit_amount: 450 } }, 'default_price expanded');

  const startupTooSmall = await c.post('billing.createCheckoutSession', { tier: 'startup', productId: 'prod_startup', serverQuantity: 2, isAnnual: false });
  t.match(startupTooSmall, { status: 400, body: { issues: [{ path: ['serverQuantity'] }] } });
  t.match(
    await c.post('billing.createCheckoutSession', { tier: 'legacy', productId: 'x', serverQuantity: 1, isAnnual: false }),
    { status: 400, body: { issues: [{ path: ['tier'] }] } },
    'a tier without a plan',
  );
  t.match(await c.post('billing.createCheckoutSession', { tier: 'hobby', productId: 'prod_hobby', serverQuantity: 0, isAnnual: false }), { status: 400 }, 'serverQuantity >= 1');

  const checkout = await c.post('billing.createCheckoutSession', { tier: 'hobby', productId: 'prod_hobby', serverQuantity: 2, isAnnual: false });
  t.equal(checkout.status, 200, JSON.stringify(checkout.body));
  const session = stripe.sessions.get(checkout.body.sessionId)!;
  t.match(session, {
    mode: 'subscription',
    customer_email: 'admin@example.com',
    client_reference_id: admin.organizationId,
    metadata: { organizationId: admin.organizationId },
    line_items_requested: [{ price: 'price_hobby_m', quantity: 2 }],
  });
  t.match(stripe.requests.at(-1), { method: 'POST', path: '/v1/checkout/sessions' }, 'through the SDK to the stand-in');

  const done = stripe.completeCheckout(session.id);
  subscriptionId = done.subscription.id;
  customerId = done.subscription.customer;
  t.match(await send(stripe.event('checkout.session.completed', done.session)), { status: 200, body: { received: true } });
  t.equal((await c.get('billing.canCreateMoreServers')).body, false, 'checkout completed, invoice unpaid: nothing granted');
  t.equal((await newServer()).status, 403);

  const unpaid = await send(stripe.event('invoice.payment_succeeded', done.invoice));
  t.match(unpaid, { status: 200, body: { ignored: true } }, 'an invoice event whose invoice is not paid grants nothing');

  const paid = stripe.pay(done.invoice.id);
  t.match(await send(stripe.event('invoice.paid', paid)), { status: 200, body: { received: true } });
  t.equal((await c.get('billing.canCreateMoreServers')).body, true, 'the paid invoice granted 2 servers');
  t.equal((await c.get('stripe.canCreateMoreServers')).body, true, 'stripe.* answers the same');
  // Five creates at once for two granted servers: the quota check and the insert hold the
  // organization's lock together, so exactly two are stored.
  const racing = await Promise.all([1, 2, 3, 4, 5].map(() => newServer()));
  t.same(racing.map(r => r.status).sort(), [200, 200, 403, 403, 403], 'concurrent creates past the quota: exactly the granted two');
  t.equal((await c.get('server.all')).body.length, 2, 'two servers stored');
  t.match(await newServer(), { status: 403, body: { message: /allows 2 server\(s\) and it has 2/ } });

  const owner = await c.get('user.get');
  t.match(
    owner.body.user,
    { stripeCustomerId: customerId, stripeSubscriptionId: subscriptionId, serversQuantity: 2 },
    "user.get: the organization's billing on its owner's user, where the peer keeps it",
  );
  const listed = (await c.get('user.all')).body.find((m: any) => m.role === 'owner');
  t.match(listed?.user, { stripeCustomerId: customerId, serversQuantity: 2 }, 'user.all shows it the same');

  const now = await c.get('billing.getProducts');
  t.match(now.body, { currentPlan: 'hobby', isAnnualCurrent: false, currentPriceAmount: 9, subscriptions: [{ id: subscriptionId, status: 'active' }] });
  t.same((await c.get('stripe.getProducts')).body, now.body, 'stripe.getProducts answers the same');
  const portal = await c.post('billing.createCustomerPortalSession', {});
  t.match(portal, { status: 200, body: { url: /^https:\/\/billing\.stripe\.test\// } });
  t.match(stripe.requests.at(-1), { path: '/v1/billing_portal/sessions', body: { customer: customerId } });
});

t.test('a replayed event changes nothing; a bad signature is a 400', async t => {
  const sub = stripe.setQuantity(subscriptionId, 1);
  const shrink = stripe.event('customer.subscription.updated', sub);
  stripe.setQuantity(subscriptionId, 2);
  t.match(await send(shrink), { status: 200 });
  t.same(await statuses(), ['active', 'inactive'], 'a smaller subscription sets the newest server inactive at once');
  // A paid invoice (the quantity back at 2) restores it; replaying the shrink then changes nothing.
  const invoice = stripe.pay(stripe.failRenewal(subscriptionId).id);
  t.match(await send(stripe.event('invoice.paid', invoice)), { status: 200 });
  t.same(await statuses(), ['active', 'active'], 'the payment sets it active again');
  t.match(await send(shrink), { status: 200, body: { received: true, duplicate: true } }, 'the replay is recognised');
  t.same(await statuses(), ['active', 'active'], 'and changes nothing');

  const forged = await send(stripe.event('invoice.paid', invoice), 't=1,v1=deadbeef');
  t.match(forged, { status: 400, body: { code: 'BAD_REQUEST', message: /Stripe-Signature does not verify/ } });
  const other = stripe.event('customer.deleted', { id: customerId, object: 'customer' });
  const signedOther = Stripe.webhooks.generateTestHeaderString({ payload: JSON.stringify(other), secret: 'whsec_someone_else' });
  t.equal((await send(other, signedOther)).status, 400, "another endpoint's secret");
  t.equal((await c.get('billing.canCreateMoreServers')).body, false, 'still 2 granted, 2 used');
});

t.test('payment failed: grace period, then the newest surplus servers inactive and deploys refused; payment restores', async t => {
  const failed = stripe.failRenewal(subscriptionId);
  t.match(await send(stripe.event('invoice.payment_failed', failed)), { status: 200 });
  t.same(await statuses(), ['active', 'active'], 'during the grace period nothing changes');
  t.same(await cradle.billing.reconcile(), [], 'reconcile inside the grace period changes nothing');

  clock.advance(7 * 86_400_000 + 1000);
  t.same(await cradle.billing.reconcile(), [{ organizationId: admin.organizationId, from: 2, to: 0 }], 'the grace period is over: nothing is paid');
  t.same(await statuses(), ['inactive', 'inactive']);

  const project = (await c.post('project.create', { name: 'billed' })).body;
  const servers = (await c.get('server.all')).body as any[];
  const app = await c.post('application.create', { name: 'on-box', environmentId: project.environment.environmentId, serverId: servers[0].serverId });
  t.equal(app.status, 200, JSON.stringify(app.body));
  const deploy = await c.post('application.deploy', { applicationId: app.body.applicationId });
  t.match(deploy, { status: 409, body: { message: /is inactive.*pay .*or remove servers/ } }, 'a deploy to an inactive server is refused, saying what lifts it');

  // The peer's form sends the whole record: the other fields are stored, serverStatus is refused by name.
  const reasons = async () =>
    (await cradle.orm.em.fork().getConnection().execute('select inactive_reason from servers where organization_id = ? order by created_at', [admin.organizationId])).map(
      (r: any) => r.inactive_reason,
    );
  t.same(await reasons(), ['billing', 'billing'], 'billing is the reason on the records');
  const { deployments: _d, sshKey: _k, ...record } = (await c.get('server.one', { serverId: servers[0].serverId })).body;
  const lifted = await c.post('server.update', { ...record, name: 'renamed while unpaid', serverStatus: 'active' });
  t.equal(lifted.status, 409, JSON.stringify(lifted.body));
  t.match(lifted.body, { code: 'CONFLICT', issues: [{ path: ['serverStatus'], message: /serverStatus: .*set inactive by billing/ }] }, 'the 409 names serverStatus');
  t.match(lifted.body.message, /pay the organization's open invoice .*or remove servers/, 'and says to pay or remove servers');
  t.notMatch(lifted.body.message, /server\.update with serverStatus/, 'not to set serverStatus');
  t.match((await c.get('server.one', { serverId: servers[0].serverId })).body, { name: 'renamed while unpaid', serverStatus: 'inactive' }, 'the other fields were stored; the server stays inactive');
  t.same(await statuses(), ['inactive', 'inactive']);

  // The customer pays the open invoice; the event is missed, the reconcile job finds it.
  stripe.pay(failed.id);
  t.same(await cradle.billing.reconcile(), [{ organizationId: admin.organizationId, from: 0, to: 2 }]);
  t.same(await statuses(), ['active', 'active'], 'the payment restores both');
  t.same(await reasons(), [null, null], "billing's reactivation clears the reason");
  // Positive control: a server an admin set inactive (not billing) is set active again by server.update.
  t.match(await c.post('server.update', { serverId: servers[0].serverId, serverStatus: 'inactive' }), { status: 200, body: { serverStatus: 'inactive' } });
  t.match(await c.post('server.update', { serverId: servers[0].serverId, serverStatus: 'active' }), { status: 200, body: { serverStatus: 'active' } });
  await c.post('application.delete', { applicationId: app.body.applicationId });
});

t.test('another organization sees nothing of this billing', async t => {
  const other = await otherOrganization(server, admin.userId);
  t.match(await other.client.get('billing.getProducts'), { status: 200, body: { subscriptions: [], currentPlan: null } });
  t.equal((await other.client.get('billing.canCreateMoreServers')).body, false);
  t.match(await other.client.post('billing.createCustomerPortalSession', {}), { status: 400, body: { message: /Stripe Customer ID not found/ } });
  t.equal((await other.client.post('server.create', { name: 'x', description: null, ipAddress: '10.255.3.1', port: 22, username: 'root', sshKeyId: null, serverType: 'deploy' })).status, 403);
  const theirs = await other.client.get('user.get');
  t.match(theirs.body, { role: 'owner', user: { stripeCustomerId: null, stripeSubscriptionId: null, serversQuantity: 0 } }, "its owner's user.get carries none of this organization's billing");
});
