// Schema history of the servers table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class ServerInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "servers" ("server_id" varchar(32) not null, "name" varchar(255) not null, "description" text null, "ip_address" varchar(255) not null, "port" int not null, "username" varchar(255) not null, "app_name" varchar(255) not null, "enable_docker_cleanup" boolean not null, "builds_concurrency" int not null default 1, "server_status" varchar(16) not null default 'active', "server_type" varchar(16) not null default 'deploy', "command" text not null default '', "ssh_key_id" varchar(32) null references "ssh_keys" ("ssh_key_id") on delete set null, "host_key_fingerprint" varchar(64) null, "metrics_config" jsonb not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "failed_probes" int not null default 0, "unreachable_since" timestamptz null, "created_at" timestamptz not null, primary key ("server_id"));`,
    );
    // Serves both the organization filter and the newest-first order of server.all.
    this.addSql(`create index "servers_organization_id_created_at_index" on "servers" ("organization_id", "created_at");`);
  }
}

/** Who set a server inactive when server.update may not undo it (billing). */
class ServerInactiveReason extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "servers" add column "inactive_reason" varchar(32) null;`);
  }
}

export const serverMigrations = [
  { name: 'Migration20261126000100_server_init', class: ServerInit },
  { name: 'Migration20270101000100_server_inactive_reason', class: ServerInactiveReason },
];
