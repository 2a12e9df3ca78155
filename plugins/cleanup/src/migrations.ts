// Schema history of the cleanup plugin. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class CleanupInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "host_cleanups" ("host_key" varchar(32) not null, "enable_docker_cleanup" boolean not null, "organization_id" varchar(32) null, "last_run_at" timestamptz null, primary key ("host_key"));`,
    );
  }
}

class AccessLogCleanupInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "access_log_cleanups" ("host_key" varchar(32) not null, "cron_expression" varchar(100) null, "last_run_at" timestamptz null, primary key ("host_key"));`);
  }
}

export const cleanupMigrations = [
  { name: 'Migration20261126160000_cleanup_init', class: CleanupInit },
  { name: 'Migration20270710000100_access_log_cleanup', class: AccessLogCleanupInit },
];
