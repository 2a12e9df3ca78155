// Schema history of the monitoring tables. Never edit a migration that has shipped: add one.
// host_key is 'local' for the machine Berth runs on, else the server's id.
import { Migration } from '@berth/core';

class MonitoringInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "monitoring_settings" ("host_key" varchar(32) not null, "metrics_config" jsonb not null, "updated_at" timestamptz not null, primary key ("host_key"));`);
    this.addSql(`create table "monitoring_hosts" ("host_key" varchar(32) not null, "info" jsonb not null, "updated_at" timestamptz not null, primary key ("host_key"));`);
    this.addSql(
      `create table "monitoring_host_samples" ("host_key" varchar(32) not null, "at" timestamptz not null, "cpu" real not null, "mem_used" bigint not null, "mem_total" bigint not null, "disk_used" bigint not null, "disk_total" bigint not null, "net_in" bigint not null, "net_out" bigint not null, "uptime" integer not null, "mounts" jsonb not null, "devices" jsonb not null, primary key ("host_key", "at"));`,
    );
    this.addSql(
      `create table "monitoring_container_samples" ("host_key" varchar(32) not null, "app_name" varchar(255) not null, "at" timestamptz not null, "container_id" varchar(64) not null, "cpu" real not null, "mem_used" bigint not null, "mem_limit" bigint not null, "net_in" bigint not null, "net_out" bigint not null, "blk_read" bigint not null, "blk_write" bigint not null, primary key ("host_key", "app_name", "at"));`,
    );
  }
}

// Downsampling: a row is one sample (span 0) or the fold of the samples of `span` seconds from `at`.
class MonitoringSpan extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "monitoring_host_samples" add column "span" integer not null default 0;`);
    this.addSql(`alter table "monitoring_container_samples" add column "span" integer not null default 0;`);
  }
}

export const monitoringMigrations = [
  { name: 'Migration20270101000000_monitoring_init', class: MonitoringInit },
  { name: 'Migration20270102000000_monitoring_span', class: MonitoringSpan },
];
