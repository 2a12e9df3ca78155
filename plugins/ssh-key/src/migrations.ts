// Schema history of the ssh_keys table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class SshKeyInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "ssh_keys" ("ssh_key_id" varchar(32) not null, "name" varchar(255) not null, "description" text null, "public_key" text not null, "private_key" text not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "last_used_at" timestamptz null, "created_at" timestamptz not null, primary key ("ssh_key_id"));`,
    );
    // Serves both the organization filter and the newest-first order of sshKey.all.
    this.addSql(`create index "ssh_keys_organization_id_created_at_index" on "ssh_keys" ("organization_id", "created_at");`);
  }
}

export const sshKeyMigrations = [{ name: 'Migration20261122000300_ssh_key_init', class: SshKeyInit }];
