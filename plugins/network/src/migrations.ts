// Schema history of the networks table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class NetworkInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "networks" ("network_id" varchar(32) not null, "name" varchar(63) not null, "driver" varchar(16) not null, "internal" boolean not null, "attachable" boolean not null, "enable_ipv4" boolean not null, "enable_ipv6" boolean not null, "mtu" int null, "ipam" jsonb null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "server_id" varchar(32) null, "created_at" timestamptz not null, primary key ("network_id"));`,
    );
    // network.all: one organization's networks on one host, newest first.
    this.addSql(`create index "networks_organization_id_server_id_created_at_index" on "networks" ("organization_id", "server_id", "created_at");`);
    // A name names one network on a host, whichever organization's record it is (this machine: server_id null).
    this.addSql(`create unique index "networks_host_name_unique" on "networks" (coalesce("server_id", ''), "name");`);
  }
}

export const networkMigrations = [{ name: 'Migration20270301000100_network_init', class: NetworkInit }];
