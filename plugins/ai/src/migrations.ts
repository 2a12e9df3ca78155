// Schema history of the ai table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class AiInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "ai" ("ai_id" varchar(32) not null, "name" varchar(255) not null, "api_url" text not null, "api_key" text not null, "model" varchar(255) not null, "is_enabled" boolean not null default true, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "created_at" timestamptz not null, primary key ("ai_id"));`,
    );
    this.addSql(`create index "ai_organization_id_created_at_index" on "ai" ("organization_id", "created_at");`);
  }
}

/** The organization's allowed AI services (ai.saveCustomProviders), in the order it saved them. */
class AiCustomProviders extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "ai_custom_providers" ("organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "position" int not null, "name" varchar(255) not null, "api_url" text not null, primary key ("organization_id", "position"));`,
    );
  }
}

export const aiMigrations = [
  { name: 'Migration20261231000000_ai_init', class: AiInit },
  { name: 'Migration20270720000000_ai_custom_providers', class: AiCustomProviders },
];
