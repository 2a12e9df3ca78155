// The billing plugin: billing.* and stripe.*, the Stripe webhook (POST /api/stripe/webhook, its
// signature checked on the raw body), server.create's quota and the reconcile job. Off until the
// operator gives both Stripe keys; the SDK loads on the first call that needs it.
import { asValue, definePlugin, optionalService } from '@berth/core';
import pkg from '../package.json' with { type: 'json' };
import config from './config.ts';
import { billingEntities } from './entities.ts';
import { billingMigrations } from './migrations.ts';
import { billingProcedures } from './procedures.ts';
import { BillingService } from './service.ts';
import { webhookRoute } from './webhook.ts';

export const RECONCILE_JOB = 'billing.reconcile';
export type { BillingService } from './service.ts';

export default definePlugin({
  name: 'billing',
  version: pkg.version,
  config,
  // The quota counts the organization's servers, and billing sets their serverStatus.
  dependencies: ['server'],
  uses: ['user'], // used when enabled (optionalService)
  setup(berth) {
    const cradle = () => berth.container.cradle;
    const billing = new BillingService(cradle);
    berth.entities(...billingEntities);
    berth.migrations(...billingMigrations);
    berth.provide({ billing: asValue(billing) });
    berth.procedures(...billingProcedures);
    berth.http(webhookRoute(billing));
    berth.jobs.define(RECONCILE_JOB, async () => void (await billing.reconcile()), { concurrency: 1, lockLifetimeMs: 10 * 60_000 });
    if (berth.config.jobs && billing.enabled) berth.jobs.every(`${berth.config.billingReconcileMinutes} minutes`, RECONCILE_JOB);
    berth.onStart(async c => {
      c.servers.checkBeforeCreate((organizationId, em) => billing.checkServerQuota(organizationId, em));
      await billing.markHeldServers().catch(e => c.logger.warn({ err: e }, 'billing could not mark the servers it set inactive before the server record kept a reason'));
      // user.get and user.all show the organization's billing on its owner's user, as the peer's.
      optionalService(c, 'users')?.billingFrom(organizationId => billing.userFields(organizationId));
    });
  },
});

declare module '@berth/core' {
  interface Cradle {
    /** Billing through Stripe (quota, webhook, reconcile); from the billing plugin. */
    billing: BillingService;
  }
}
