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

// Leaner rows (issue #37's storage aim): each series — a host ('' app and container) or one container
// of a workload — is named once in monitoring_series, and the samples carry its integer id instead
// of the server id, app name and container id; their columns are ordered widest first so no padding
// is stored. The key leads with the span (0 a sample, 300 or 3600 a fold), so each resolution is a
// queue of its own in the index: a fold's rows do not land in the pages of the rows it replaces, and
// pages emptied by a fold or a prune are reused. A host's mounts and interfaces, read of its newest
// sample only, are kept once per host (monitoring_host_latest) instead of in every row. A series'
// rows go with it (clean drops the series). The old rows are copied.
class MonitoringSeries extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "monitoring_series" ("id" serial primary key, "host_key" varchar(32) not null, "app_name" varchar(255) not null, "container_id" varchar(64) not null, unique ("host_key", "app_name", "container_id"));`,
    );
    for (const table of ['monitoring_host_samples', 'monitoring_container_samples']) {
      this.addSql(`alter table "${table}" rename to "${table}_v1";`);
      this.addSql(`alter table "${table}_v1" rename constraint "${table}_pkey" to "${table}_v1_pkey";`);
    }
    this.addSql(
      `insert into "monitoring_series" ("host_key", "app_name", "container_id") select distinct "host_key", '', '' from "monitoring_host_samples_v1" union select distinct "host_key", "app_name", "container_id" from "monitoring_container_samples_v1";`,
    );
    const series = `"series_id" integer not null references "monitoring_series" ("id") on delete cascade`;
    this.addSql(
      `create table "monitoring_host_samples" ("at" timestamptz not null, "mem_used" bigint not null, "mem_total" bigint not null, "disk_used" bigint not null, "disk_total" bigint not null, "net_in" bigint not null, "net_out" bigint not null, ${series}, "cpu" real not null, "uptime" integer not null, "span" smallint not null default 0, primary key ("span", "series_id", "at"));`,
    );
    this.addSql(
      `create table "monitoring_container_samples" ("at" timestamptz not null, "mem_used" bigint not null, "mem_limit" bigint not null, "net_in" bigint not null, "net_out" bigint not null, "blk_read" bigint not null, "blk_write" bigint not null, ${series}, "cpu" real not null, "span" smallint not null default 0, primary key ("span", "series_id", "at"));`,
    );
    this.addSql(
      `create table "monitoring_host_latest" ("series_id" integer not null primary key references "monitoring_series" ("id") on delete cascade, "at" timestamptz not null, "mounts" jsonb not null, "devices" jsonb not null);`,
    );
    this.addSql(
      `insert into "monitoring_host_samples" select o."at", o."mem_used", o."mem_total", o."disk_used", o."disk_total", o."net_in", o."net_out", s."id", o."cpu", o."uptime", o."span" from "monitoring_host_samples_v1" o join "monitoring_series" s on s."host_key" = o."host_key" and s."app_name" = '' and s."container_id" = '';`,
    );
    this.addSql(
      `insert into "monitoring_host_latest" select distinct on (s."id") s."id", o."at", o."mounts", o."devices" from "monitoring_host_samples_v1" o join "monitoring_series" s on s."host_key" = o."host_key" and s."app_name" = '' and s."container_id" = '' order by s."id", o."at" desc;`,
    );
    this.addSql(
      `insert into "monitoring_container_samples" select o."at", o."mem_used", o."mem_limit", o."net_in", o."net_out", o."blk_read", o."blk_write", s."id", o."cpu", o."span" from "monitoring_container_samples_v1" o join "monitoring_series" s on s."host_key" = o."host_key" and s."app_name" = o."app_name" and s."container_id" = o."container_id";`,
    );
    this.addSql(`drop table "monitoring_host_samples_v1";`);
    this.addSql(`drop table "monitoring_container_samples_v1";`);
  }
}

export const monitoringMigrations = [
  { name: 'Migration20270101000000_monitoring_init', class: MonitoringInit },
  { name: 'Migration20270102000000_monitoring_span', class: MonitoringSpan },
  { name: 'Migration20270127000000_monitoring_series', class: MonitoringSeries },
];
