// Schema history of the hosts plugin. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class DefaultSshKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "default_ssh_keys" ("organization_id" varchar(32) not null primary key references "organizations" ("id") on delete cascade, "private_key" text not null, "created_at" timestamptz not null);`,
    );
  }
}

export const hostsMigrations = [{ name: 'Migration20261126200000_hosts_default_ssh_keys', class: DefaultSshKeys }];
