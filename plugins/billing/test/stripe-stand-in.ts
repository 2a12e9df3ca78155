// A loopback stand-in for the part of Stripe's API Berth calls (products, customers, checkout and
// billing-portal sessions, subscriptions and their update, invoices), speaking its wire format: form-encoded bodies with
// bracketed keys, `expand[]`, list objects, a 401 for a wrong key. The test moves the customer's
// side (completing a checkout, paying or failing an invoice) through its methods and builds the
// events Stripe would send from the objects it holds. Every request is recorded. Test-only.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

type Obj = Record<string, any>;
const id = (prefix: string) => `${prefix}_test_${randomBytes(8).toString('hex')}`;

/** `a[b][0][c]=v` pairs → nested objects; numeric keys make arrays. */
export function parseForm(text: string): Obj {
  const root: Obj = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = [...key.matchAll(/[^[\]]+/g)].map(m => m[0]);
    let at: Obj = root;
    path.forEach((segment, i) => {
      if (i === path.length - 1) at[segment] = value;
      else at = at[segment] ??= {};
    });
  }
  const arrays = (v: any): any => {
    if (typeof v !== 'object' || v === null) return v;
    const keys = Object.keys(v);
    const out = keys.length && keys.every(k => /^\d+$/.test(k)) ? keys.sort((a, b) => Number(a) - Number(b)).map(k => v[k]) : v;
    for (const k of Object.keys(out)) out[k] = arrays(out[k]);
    return out;
  };
  return arrays(root);
}

export interface StripeStandIn {
  url: string;
  port: number;
  requests: { method: string; path: string; query: Obj; body: Obj }[];
  products: Obj[];
  prices: Map<string, Obj>;
  sessions: Map<string, Obj>;
  customers: Map<string, Obj>;
  subscriptions: Map<string, Obj>;
  invoices: Map<string, Obj>;
  /** The customer finished Checkout: a customer, an incomplete subscription and its open first invoice. */
  completeCheckout(sessionId: string): { session: Obj; subscription: Obj; invoice: Obj };
  /** The invoice is paid: its subscription becomes active. */
  pay(invoiceId: string): Obj;
  /** A new invoice of the subscription (a renewal) whose payment fails: the subscription is past_due. */
  failRenewal(subscriptionId: string): Obj;
  /** Changes the quantity of the subscription's first item. */
  setQuantity(subscriptionId: string, quantity: number): Obj;
  /** An event as Stripe sends it, of an object it holds (a copy: later changes do not reach it). */
  event(type: string, object: Obj): Obj;
  close(): Promise<void>;
}

export async function startStripeStandIn(secretKey: string, catalog: { products: Obj[]; prices: Obj[] }): Promise<StripeStandIn> {
  const requests: StripeStandIn['requests'] = [];
  const prices = new Map(catalog.prices.map(p => [p.id, { object: 'price', active: true, currency: 'usd', ...p }]));
  const products: Obj[] = catalog.products.map(p => ({ object: 'product', active: true, ...p }));
  const sessions = new Map<string, Obj>();
  const customers = new Map<string, Obj>();
  const subscriptions = new Map<string, Obj>();
  const invoices = new Map<string, Obj>();
  const now = () => Math.floor(Date.now() / 1000);

  const list = (data: Obj[], url: string) => ({ object: 'list', data, has_more: false, url });
  const withPrice = (sub: Obj) => sub; // items already carry the full price object
  const expandSub = (sub: Obj, expand: string[]) =>
    expand.includes('latest_invoice') || expand.includes('data.latest_invoice') ? { ...sub, latest_invoice: invoices.get(sub.latest_invoice) ?? null } : withPrice(sub);

  let invoiceNumber = 0;
  const newInvoice = (sub: Obj, billingReason: string): Obj => {
    const invoiceId = id('in');
    const invoice = {
      id: invoiceId,
      object: 'invoice',
      number: `BERTH-${String(++invoiceNumber).padStart(4, '0')}`,
      due_date: null,
      hosted_invoice_url: `https://invoice.stripe.test/i/${invoiceId}`,
      invoice_pdf: `https://pay.stripe.test/invoice/${invoiceId}/pdf`,
      customer: sub.customer,
      status: 'open',
      billing_reason: billingReason,
      amount_due: sub.items.data.reduce((s: number, i: Obj) => s + i.price.unit_amount * i.quantity, 0),
      amount_paid: 0,
      currency: 'usd',
      created: now(),
      parent: { type: 'subscription_details', subscription_details: { subscription: sub.id, metadata: sub.metadata } },
      lines: {
        object: 'list',
        data: sub.items.data.map((i: Obj) => ({ id: id('il'), object: 'line_item', quantity: i.quantity, pricing: { price_details: { price: i.price.id } } })),
        has_more: false,
      },
    };
    invoices.set(invoice.id, invoice);
    sub.latest_invoice = invoice.id;
    return invoice;
  };

  const route = (method: string, path: string, query: Obj, body: Obj): [number, Obj] => {
    let m: RegExpMatchArray | null;
    if (method === 'GET' && path === '/v1/products') {
      const data = products
        .filter(p => query.active !== 'true' || p.active)
        .map(p => ((query.expand ?? []).includes('data.default_price') ? { ...p, default_price: prices.get(p.default_price) ?? p.default_price } : p));
      return [200, list(data, '/v1/products')];
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/customers\/([^/]+)$/))) {
      const c = customers.get(m[1]!);
      return c ? [200, c] : [404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such customer: '${m[1]}'` } }];
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      if (body.mode !== 'subscription') return [400, { error: { type: 'invalid_request_error', message: 'mode must be subscription here', param: 'mode' } }];
      for (const [i, item] of (body.line_items ?? []).entries()) {
        if (!prices.has(item.price)) return [400, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such price: '${item.price}'`, param: `line_items[${i}][price]` } }];
      }
      if (body.customer && !customers.has(body.customer)) return [400, { error: { type: 'invalid_request_error', message: `No such customer: '${body.customer}'`, param: 'customer' } }];
      const session = {
        id: id('cs'),
        object: 'checkout.session',
        mode: 'subscription',
        status: 'open',
        payment_status: 'unpaid',
        url: `https://checkout.stripe.test/c/pay/${randomBytes(6).toString('hex')}`,
        customer: body.customer ?? null,
        customer_email: body.customer_email ?? null,
        client_reference_id: body.client_reference_id ?? null,
        metadata: body.metadata ?? {},
        subscription: null,
        success_url: body.success_url,
        cancel_url: body.cancel_url,
        line_items_requested: (body.line_items ?? []).map((i: Obj) => ({ price: i.price, quantity: Number(i.quantity) })),
        subscription_metadata: body.subscription_data?.metadata ?? {},
        created: now(),
      };
      sessions.set(session.id, session);
      return [200, session];
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      if (!customers.has(body.customer)) return [400, { error: { type: 'invalid_request_error', message: `No such customer: '${body.customer}'`, param: 'customer' } }];
      return [
        200,
        { id: id('bps'), object: 'billing_portal.session', customer: body.customer, return_url: body.return_url, url: `https://billing.stripe.test/p/session/${randomBytes(6).toString('hex')}` },
      ];
    }
    if (method === 'GET' && path === '/v1/subscriptions') {
      const data = [...subscriptions.values()].filter(s => (!query.customer || s.customer === query.customer) && (!query.status || s.status === query.status));
      return [200, list(data, '/v1/subscriptions')];
    }
    if (method === 'GET' && (m = path.match(/^\/v1\/subscriptions\/([^/]+)$/))) {
      const s = subscriptions.get(m[1]!);
      return s ? [200, expandSub(s, query.expand ?? [])] : [404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such subscription: '${m[1]}'` } }];
    }
    if (method === 'POST' && (m = path.match(/^\/v1\/subscriptions\/([^/]+)$/))) {
      const sub = subscriptions.get(m[1]!);
      if (!sub) return [404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such subscription: '${m[1]}'` } }];
      // Items with an id are changed or deleted, items without one added (Stripe's semantics).
      const changes: Obj[] = body.items ?? [];
      for (const [i, change] of changes.entries()) {
        if (change.price && !prices.has(change.price))
          return [400, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such price: '${change.price}'`, param: `items[${i}][price]` } }];
        if (change.id && !sub.items.data.some((item: Obj) => item.id === change.id))
          return [400, { error: { type: 'invalid_request_error', message: `Invalid subscription item: '${change.id}'`, param: `items[${i}][id]` } }];
      }
      for (const change of changes) {
        const item = change.id && sub.items.data.find((x: Obj) => x.id === change.id);
        if (item && change.deleted === 'true') sub.items.data = sub.items.data.filter((x: Obj) => x !== item);
        else if (item) Object.assign(item, { ...(change.price ? { price: prices.get(change.price) } : {}), ...(change.quantity ? { quantity: Number(change.quantity) } : {}) });
        else sub.items.data.push({ id: id('si'), object: 'subscription_item', quantity: Number(change.quantity ?? 1), price: prices.get(change.price) });
      }
      if (body.proration_behavior) sub.last_proration_behavior = body.proration_behavior;
      return [200, sub];
    }
    if (method === 'GET' && path === '/v1/invoices') {
      // Newest first; the last made first among those of the same second.
      const data = [...invoices.values()]
        .filter(i => !query.customer || i.customer === query.customer)
        .reverse()
        .sort((a, b) => b.created - a.created);
      return [200, list(data.slice(0, Number(query.limit ?? 10)), '/v1/invoices')];
    }
    return [404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}) in the stand-in` } }];
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', c => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      const query = parseForm(url.searchParams.toString());
      const body = parseForm(Buffer.concat(chunks).toString('utf8'));
      requests.push({ method: req.method ?? 'GET', path: url.pathname, query, body });
      const send = (status: number, json: Obj) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
        res.end(JSON.stringify(json));
      };
      const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      if (key !== secretKey) return send(401, { error: { type: 'invalid_request_error', message: `Invalid API Key provided: ${key.slice(0, 8)}***` } });
      const [status, json] = route(req.method ?? 'GET', url.pathname, query, body);
      send(status, json);
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    products,
    prices,
    sessions,
    customers,
    subscriptions,
    invoices,
    completeCheckout(sessionId) {
      const session = sessions.get(sessionId)!;
      const customer = session.customer ? customers.get(session.customer)! : { id: id('cus'), object: 'customer', email: session.customer_email, created: now() };
      customers.set(customer.id, customer);
      const sub: Obj = {
        id: id('sub'),
        object: 'subscription',
        customer: customer.id,
        status: 'incomplete',
        metadata: session.subscription_metadata,
        created: now(),
        items: {
          object: 'list',
          has_more: false,
          data: session.line_items_requested.map((i: Obj) => ({ id: id('si'), object: 'subscription_item', quantity: i.quantity, price: prices.get(i.price) })),
        },
      };
      subscriptions.set(sub.id, sub);
      const invoice = newInvoice(sub, 'subscription_create');
      Object.assign(session, { status: 'complete', customer: customer.id, subscription: sub.id });
      return { session, subscription: sub, invoice };
    },
    pay(invoiceId) {
      const invoice = invoices.get(invoiceId)!;
      Object.assign(invoice, { status: 'paid', amount_paid: invoice.amount_due });
      subscriptions.get(invoice.parent.subscription_details.subscription)!.status = 'active';
      return invoice;
    },
    failRenewal(subscriptionId) {
      const sub = subscriptions.get(subscriptionId)!;
      sub.status = 'past_due';
      return newInvoice(sub, 'subscription_cycle');
    },
    setQuantity(subscriptionId, quantity) {
      const sub = subscriptions.get(subscriptionId)!;
      sub.items.data[0].quantity = quantity;
      return sub;
    },
    event(type, object) {
      return { id: id('evt'), object: 'event', api_version: '2026-10-28.endive', created: now(), livemode: false, type, data: { object: structuredClone(object) } };
    },
    close: () => new Promise(resolve => server.close(() => resolve())),
  };
}
