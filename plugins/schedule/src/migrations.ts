// Schema history of the schedules table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class ScheduleInit extends Migration {
  override async up(): Promise<void> {
    // The workload and server tables belong to other plugins: no foreign key to them.
    this.addSql(`create table "schedules" (
      "schedule_id" varchar(32) not null primary key,
      "name" text not null, "description" text null, "cron_expression" text not null,
      "app_name" varchar(64) not null, "service_name" text null,
      "shell_type" varchar(8) not null, "schedule_type" varchar(32) not null,
      "command" text not null, "script" text null,
      "service_id" varchar(64) null, "server_id" varchar(64) null,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "enabled" boolean not null, "timezone" varchar(64) null,
      "created_at" timestamptz not null, "last_run_at" timestamptz null);`);
    this.addSql(`create index "schedules_service_id_index" on "schedules" ("service_id");`);
    this.addSql(`create index "schedules_server_id_index" on "schedules" ("server_id");`);
    this.addSql(`create index "schedules_organization_id_index" on "schedules" ("organization_id");`);
    // The tick reads the enabled ones only.
    this.addSql(`create index "schedules_enabled_index" on "schedules" ("created_at") where "enabled";`);
  }
}

export const scheduleMigrations = [{ name: 'Migration20270401000000_schedule_init', class: ScheduleInit }];
