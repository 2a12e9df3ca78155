// Schema history of the registries table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class RegistryInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "registries" ("registry_id" varchar(32) not null, "registry_name" varchar(255) not null, "image_prefix" varchar(255) null, "username" varchar(255) not null, "password" text not null, "registry_url" varchar(255) not null, "registry_type" varchar(16) not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "created_at" timestamptz not null, primary key ("registry_id"));`,
    );
    // Serves both the organization filter and the order of registry.all.
    this.addSql(`create index "registries_organization_id_created_at_index" on "registries" ("organization_id", "created_at");`);
  }
}

class RegistrySelfHostedServer extends Migration {
  override async up(): Promise<void> {
    // Whether Berth runs the registry (enableSelfHostedRegistry made it), and where (null: this machine).
    this.addSql(`alter table "registries" add column "runs_service" boolean not null default false, add column "server_id" varchar(32) null;`);
  }
}

export const registryMigrations = [
  { name: 'Migration20270101000100_registry_init', class: RegistryInit },
  { name: 'Migration20270128000100_registry_self_hosted_server', class: RegistrySelfHostedServer },
];
