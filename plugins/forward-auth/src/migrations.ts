// Schema history of the forward-auth tables. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class ForwardAuthInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "forward_auth_settings" (
      "forward_auth_settings_id" varchar(32) not null primary key,
      "server_id" varchar(32) null,
      "organization_id" varchar(32) null references "organizations" ("id") on delete cascade,
      "auth_domain" varchar(253) not null unique,
      "base_domain" varchar(253) not null,
      "https" boolean not null,
      "certificate_type" varchar(16) not null,
      "custom_cert_resolver" varchar(255) null,
      "provider_id" varchar(64) null,
      "created_at" timestamptz not null);`);
    // One auth domain per proxy: this machine's (server_id null) and each server's.
    this.addSql(`create unique index "forward_auth_settings_server_unique" on "forward_auth_settings" ((coalesce("server_id", '')));`);
    this.addSql(`create table "forward_auth_roles" (
      "domain_id" varchar(32) not null primary key references "domains" ("domain_id") on delete cascade,
      "role" varchar(16) not null);`);
  }
}

export const forwardAuthMigrations = [{ name: 'Migration20270810010000_forward_auth_init', class: ForwardAuthInit }];
