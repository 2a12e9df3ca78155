// Schema history of the SCIM tables. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class ScimInit extends Migration {
  override async up(): Promise<void> {
    // Both go with their organization; a user's links go with the account (checked at commit: a unit of work inserts in any order).
    this.addSql(
      `create table "scim_providers" ("id" varchar(32) not null, "provider_id" varchar(64) not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "token_hash" varchar(64) not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql('create index "scim_providers_organization_id_index" on "scim_providers" ("organization_id");');
    this.addSql('alter table "scim_providers" add constraint "scim_providers_token_hash_unique" unique ("token_hash");');
    this.addSql('alter table "scim_providers" add constraint "scim_providers_organization_id_provider_id_unique" unique ("organization_id", "provider_id");');
    this.addSql(
      `create table "scim_users" ("id" varchar(32) not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "user_id" varchar(32) not null references "users" ("id") on delete cascade deferrable initially deferred, "external_id" varchar(255) null, "active" boolean not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql('create index "scim_users_organization_id_index" on "scim_users" ("organization_id");');
    this.addSql('create index "scim_users_user_id_index" on "scim_users" ("user_id");');
    this.addSql('alter table "scim_users" add constraint "scim_users_organization_id_user_id_unique" unique ("organization_id", "user_id");');
  }
}

export const scimMigrations = [{ name: 'Migration20270810000000_scim_init', class: ScimInit }];
