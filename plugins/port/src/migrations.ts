// Schema history of the ports table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class PortsInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "ports" (
      "port_id" varchar(32) not null primary key,
      "published_port" integer not null check ("published_port" between 1 and 65535),
      "publish_mode" varchar(8) not null check ("publish_mode" in ('ingress', 'host')),
      "target_port" integer not null check ("target_port" between 1 and 65535),
      "protocol" varchar(4) not null check ("protocol" in ('tcp', 'udp')),
      "application_id" varchar(32) not null,
      "server_id" varchar(32) null,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "created_at" timestamptz not null);`);
    // The applications table belongs to another plugin (which may be disabled), so no foreign
    // key: it calls PortDirectory.removeForApplication when an application goes.
    this.addSql(`create index "ports_application_id_index" on "ports" ("application_id", "created_at");`);
    // The swarm's routing mesh holds an ingress port on every node of the host: one owner per
    // port and protocol, whichever organization asks (the service checks first and names the port).
    this.addSql(`create unique index "ports_ingress_unique" on "ports" (coalesce("server_id", ''), "published_port", "protocol") where "publish_mode" = 'ingress';`);
    this.addSql(`create index "ports_host_port_index" on "ports" ("published_port", "protocol");`);
  }
}

export const portMigrations = [{ name: 'Migration20261123000500_ports_init', class: PortsInit }];
