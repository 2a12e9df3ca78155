// POST /api/stripe/webhook (the peer's path): Stripe's signed events. The signature covers the
// exact bytes Stripe sent, so this route (in its own Fastify context) reads the body raw.
import type { BerthHost } from '@berth/core';
import type { BillingService } from './service.ts';

export const WEBHOOK_PATH = '/api/stripe/webhook';

export const webhookRoute =
  (billing: BillingService): Parameters<BerthHost['http']>[0] =>
  app => {
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_req, body, done) => done(null, body));
    app.post(WEBHOOK_PATH, { schema: { hide: true } }, async req => {
      const signature = req.headers['stripe-signature'];
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      return billing.webhook(body, typeof signature === 'string' ? signature : undefined);
    });
  };
