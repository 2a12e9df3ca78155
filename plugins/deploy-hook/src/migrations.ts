// Schema history of the delivery log. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class DeployHookInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "webhook_deliveries" ("webhook_delivery_id" varchar(32) not null, "target_type" varchar(32) not null, "target_id" varchar(64) not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade, "provider" varchar(16) not null, "event" varchar(64) not null, "delivery_id" varchar(128) null, "signature_ok" boolean null, "status_code" int not null, "decision" text not null, "deployment_id" varchar(32) null, "ref" varchar(255) null, "commit" varchar(64) null, "created_at" timestamptz not null, primary key ("webhook_delivery_id"));`,
    );
    // A workload's log, newest first; a redelivery is looked up by its id.
    this.addSql(`create index "webhook_deliveries_target_type_target_id_created_at_index" on "webhook_deliveries" ("target_type", "target_id", "created_at");`);
    this.addSql(`create index "webhook_deliveries_delivery_id_index" on "webhook_deliveries" ("target_id", "delivery_id");`);
  }
}

class RegisteredWebhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "registered_webhooks" ("registered_webhook_id" varchar(32) not null, "target_type" varchar(32) not null, "target_id" varchar(64) not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade, "provider" varchar(16) not null, "connection_id" varchar(64) not null, "owner" varchar(255) not null, "name" varchar(255) not null, "hook_id" varchar(128) not null, "url" text not null, "secret_hash" varchar(64) not null, "created_at" timestamptz not null, primary key ("registered_webhook_id"));`,
    );
    this.addSql(`create index "registered_webhooks_target_type_target_id_index" on "registered_webhooks" ("target_type", "target_id");`);
  }
}

/** A forge is any enabled git provider, named by its provider id: its name no longer fits the four vendors' 16 characters. */
class ForgeProviderIds extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_deliveries" alter column "provider" type varchar(64);`);
    this.addSql(`alter table "registered_webhooks" alter column "provider" type varchar(64);`);
  }
}

export const deployHookMigrations = [
  { name: 'Migration20270110000200_deploy_hook_init', class: DeployHookInit },
  { name: 'Migration20270128000100_registered_webhooks', class: RegisteredWebhooks },
  { name: 'Migration20270206000100_forge_provider_ids', class: ForgeProviderIds },
];
