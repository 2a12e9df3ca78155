// Schema history of the sso tables. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class SsoInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "sso_providers" ("id" varchar(32) not null, "provider_id" varchar(255) not null, "organization_id" varchar(32) not null, "user_id" varchar(32) null, "issuer" text not null, "domain" text not null, "oidc_config" text null, "saml_config" text null, "default_role" varchar(50) not null default 'member', "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "sso_providers" add constraint "sso_providers_provider_id_unique" unique ("provider_id");`);
    this.addSql(`create index "sso_providers_organization_id_index" on "sso_providers" ("organization_id");`);
    this.addSql(
      `create table "sso_settings" ("organization_id" varchar(32) not null, "enforce_sso" boolean not null default false, "trusted_origins" jsonb not null, primary key ("organization_id"));`,
    );
  }
}

export const ssoMigrations = [{ name: 'Migration20271207000000_sso_init', class: SsoInit }];
