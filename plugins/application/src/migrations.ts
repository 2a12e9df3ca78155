// Schema history of the applications table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class ApplicationInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "applications" (
      "application_id" varchar(32) not null primary key,
      "name" varchar(255) not null,
      "app_name" varchar(63) not null,
      "description" text null,
      "environment_id" varchar(32) not null references "environments" ("environment_id") on delete cascade deferrable initially deferred,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "server_id" varchar(32) null,
      "source_type" varchar(16) not null,
      "build_type" varchar(24) not null,
      "application_status" varchar(8) not null,
      "refresh_token" varchar(255) null,
      "settings" jsonb not null,
      "sealed" text not null,
      "created_at" timestamptz not null);`);
    // A Swarm service name is unique per host.
    this.addSql(`create unique index "applications_host_app_name_unique" on "applications" (coalesce("server_id", ''), "app_name");`);
    this.addSql(`create index "applications_environment_id_index" on "applications" ("environment_id", "created_at");`);
    this.addSql(`create index "applications_organization_id_index" on "applications" ("organization_id", "created_at");`);
  }
}

/** A refresh-token hook can require signed deliveries (the deploy-hook plugin). */
class ApplicationWebhookSecret extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "applications" add column "webhook_secret" text null;`);
  }
}

export const applicationMigrations = [
  { name: 'Migration20261123000100_application_init', class: ApplicationInit },
  { name: 'Migration20270110000000_application_webhook_secret', class: ApplicationWebhookSecret },
];
