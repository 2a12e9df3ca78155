// Schema history of the notification tables. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class NotificationInit extends Migration {
  override async up(): Promise<void> {
    const toggles = ['app_deploy', 'app_build_error', 'database_backup', 'volume_backup', 'dokploy_backup', 'platform_restart', 'docker_cleanup', 'server_threshold', 'app_health']
      .map(c => `"${c}" boolean not null default false`)
      .join(', ');
    this.addSql(
      `create table "notifications" ("notification_id" varchar(32) not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "name" varchar(255) not null, "notification_type" varchar(32) not null, "channel_id" varchar(32) not null, "settings" jsonb not null, "secrets" text not null, "signing_secret" text null, ${toggles}, "created_at" timestamptz not null, primary key ("notification_id"));`,
    );
    this.addSql(`create index "notifications_organization_id_created_at_index" on "notifications" ("organization_id", "created_at");`);
    this.addSql(
      `create table "notification_deliveries" ("delivery_id" varchar(32) not null, "notification_id" varchar(32) not null references "notifications" ("notification_id") on delete cascade, "organization_id" varchar(32) not null, "event" varchar(64) not null, "message" jsonb not null, "state" varchar(16) not null default 'pending', "tries" int not null default 0, "next_attempt_at" timestamptz not null, "locked_until" timestamptz null, "last_attempt_at" timestamptz null, "sent_at" timestamptz null, "answer_status" int null, "answer" text null, "created_at" timestamptz not null, primary key ("delivery_id"));`,
    );
    this.addSql(`create index "notification_deliveries_notification_id_created_at_index" on "notification_deliveries" ("notification_id", "created_at");`);
    // Only the rows the worker looks for: due and not finished.
    this.addSql(`create index "notification_deliveries_due_index" on "notification_deliveries" ("next_attempt_at") where "state" in ('pending', 'sending');`);
  }
}

export const notificationMigrations = [{ name: 'Migration20261126090000_notification_init', class: NotificationInit }];
