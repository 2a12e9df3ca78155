// Schema history of the compose_stacks table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class ComposeInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "compose_stacks" (
      "compose_id" varchar(32) not null primary key,
      "name" varchar(255) not null,
      "app_name" varchar(63) not null,
      "description" text null,
      "environment_id" varchar(32) not null references "environments" ("environment_id") on delete cascade deferrable initially deferred,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "server_id" varchar(32) null,
      "source_type" varchar(16) not null,
      "compose_type" varchar(16) not null,
      "compose_status" varchar(8) not null,
      "refresh_token" varchar(255) null,
      "compose_file" text not null,
      "settings" jsonb not null,
      "sealed" text not null,
      "created_at" timestamptz not null);`);
    // The compose project (or stack) name is unique per host.
    this.addSql(`create unique index "compose_stacks_host_app_name_unique" on "compose_stacks" (coalesce("server_id", ''), "app_name");`);
    this.addSql(`create index "compose_stacks_environment_id_index" on "compose_stacks" ("environment_id", "created_at");`);
    this.addSql(`create index "compose_stacks_organization_id_index" on "compose_stacks" ("organization_id", "created_at");`);
  }
}

/** A refresh-token hook can require signed deliveries (the deploy-hook plugin). */
class ComposeWebhookSecret extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "compose_stacks" add column "webhook_secret" text null;`);
  }
}

export const composeMigrations = [
  { name: 'Migration20261206000000_compose_init', class: ComposeInit },
  { name: 'Migration20270110000100_compose_webhook_secret', class: ComposeWebhookSecret },
];
