// Schema history of the backup tables. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class BackupsInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "backup_destinations" (
      "destination_id" varchar(32) not null primary key,
      "name" text not null, "provider" text null, "access_key" text not null, "secret_access_key" text not null,
      "bucket" text not null, "region" text not null, "endpoint" text not null, "additional_flags" jsonb null,
      "server_id" varchar(32) null,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "created_at" timestamptz not null);`);
    this.addSql(`create index "backup_destinations_organization_id_index" on "backup_destinations" ("organization_id");`);
    // The workload tables belong to other plugins: no foreign key to them; a workload's backups go with it through the kind's removal.
    this.addSql(`create table "backups" (
      "backup_id" varchar(32) not null primary key, "app_name" varchar(64) not null unique,
      "schedule" text not null, "enabled" boolean null, "database" text not null, "prefix" text not null,
      "service_name" text null,
      "destination_id" varchar(32) not null references "backup_destinations" ("destination_id") on delete cascade,
      "keep_latest_count" int null, "backup_type" varchar(16) not null default 'database',
      "database_type" varchar(32) not null, "database_id" varchar(64) not null,
      "user_id" varchar(64) null, "metadata" jsonb null, "encryption_key" text null,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "created_at" timestamptz not null, "last_run_at" timestamptz null, "last_error" text null,
      "missed_windows" int not null default 0, "last_missed_at" timestamptz null);`);
    this.addSql(`create index "backups_destination_id_index" on "backups" ("destination_id");`);
    this.addSql(`create index "backups_database_id_index" on "backups" ("database_id");`);
    this.addSql(`create index "backups_organization_id_index" on "backups" ("organization_id");`);
    this.addSql(`create table "backup_files" (
      "id" varchar(32) not null primary key,
      "backup_id" varchar(32) not null references "backups" ("backup_id") on delete cascade,
      "destination_id" varchar(32) not null, "organization_id" varchar(32) not null,
      "key" text not null, "size" bigint not null, "sha256" varchar(64) not null,
      "verified" boolean null, "verification" text null, "created_at" timestamptz not null);`);
    this.addSql(`create index "backup_files_backup_id_index" on "backup_files" ("backup_id");`);
    this.addSql(`create index "backup_files_destination_key_index" on "backup_files" ("destination_id", "key");`);
    this.addSql(`create table "backup_restores" (
      "restore_id" varchar(32) not null primary key,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "destination_id" varchar(32) not null, "database_type" varchar(32) not null, "database_id" varchar(64) not null,
      "database_name" text not null, "backup_file" text not null, "encryption_key" text null, "created_at" timestamptz not null);`);
    this.addSql(`create index "backup_restores_organization_id_index" on "backup_restores" ("organization_id");`);
  }
}

class VolumeBackups extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "volume_backups" (
      "volume_backup_id" varchar(32) not null primary key, "name" text not null, "volume_name" text not null, "prefix" text not null,
      "service_type" varchar(32) not null, "service_id" varchar(64) not null, "app_name" varchar(64) not null unique,
      "service_name" text null, "turn_off" boolean not null default false, "cron_expression" text not null,
      "keep_latest_count" int null, "enabled" boolean null,
      "destination_id" varchar(32) not null references "backup_destinations" ("destination_id") on delete cascade,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "created_at" timestamptz not null, "last_run_at" timestamptz null, "last_error" text null);`);
    this.addSql(`create index "volume_backups_service_id_index" on "volume_backups" ("service_id");`);
    this.addSql(`create index "volume_backups_destination_id_index" on "volume_backups" ("destination_id");`);
    this.addSql(`create index "volume_backups_organization_id_index" on "volume_backups" ("organization_id");`);
    this.addSql(`create table "volume_restores" (
      "restore_id" varchar(32) not null primary key,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "destination_id" varchar(32) not null, "service_type" varchar(32) not null, "service_id" varchar(64) not null,
      "volume_name" text not null, "backup_file" text not null, "created_at" timestamptz not null);`);
    this.addSql(`create index "volume_restores_organization_id_index" on "volume_restores" ("organization_id");`);
  }
}

/** Web-server backups (Berth's own data) belong to no workload. */
class WebServerBackups extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "backups" alter column "database_id" drop not null;`);
  }
}

/** A restore into a compose service names its service and backup type. */
class RestoreServices extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "backup_restores" add column "backup_type" varchar(16) not null default 'database', add column "service_name" text null;`);
  }
}

export const backupMigrations = [
  { name: 'Migration20261205000000_backups_init', class: BackupsInit },
  { name: 'Migration20261224000000_volume_backups', class: VolumeBackups },
  { name: 'Migration20261225000000_web_server_backups', class: WebServerBackups },
  { name: 'Migration20261230000000_restore_services', class: RestoreServices },
];
