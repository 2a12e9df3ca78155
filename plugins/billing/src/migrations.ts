// Schema history of the billing tables. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class BillingInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "billing_accounts" ("organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "stripe_customer_id" varchar(255) null, "stripe_subscription_id" varchar(255) null, "servers_quantity" int not null default 0, "payment_failed_at" timestamptz null, "grace_until" timestamptz null, "deactivated_server_ids" jsonb not null default '[]', "updated_at" timestamptz not null, primary key ("organization_id"));`,
    );
    this.addSql(`create unique index "billing_accounts_stripe_customer_id_unique" on "billing_accounts" ("stripe_customer_id");`);
    this.addSql(`create index "billing_accounts_stripe_subscription_id_index" on "billing_accounts" ("stripe_subscription_id");`);
    this.addSql(
      `create table "billing_events" ("event_id" varchar(255) not null, "type" varchar(255) not null, "organization_id" varchar(32) null, "received_at" timestamptz not null, primary key ("event_id"));`,
    );
  }
}

/** stripe.updateInvoiceNotifications: the owner's wish, per organization (the peer keeps it on its owner's user). */
class BillingInvoiceNotifications extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "billing_accounts" add column "send_invoice_notifications" boolean not null default false;`);
  }
}

export const billingMigrations = [
  { name: 'Migration20261231000100_billing_init', class: BillingInit },
  { name: 'Migration20270720000100_billing_invoice_notifications', class: BillingInvoiceNotifications },
];
