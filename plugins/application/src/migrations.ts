// Schema history of the applications table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';
import { workloadTableSql } from '@berth/plugin-workloads';

class ApplicationInit extends Migration {
  override async up(): Promise<void> {
    const own = ['"source_type" varchar(16) not null', '"build_type" varchar(24) not null', '"application_status" varchar(8) not null', '"refresh_token" varchar(255) null'];
    for (const sql of workloadTableSql('applications', 'application_id', own, '      ')) this.addSql(sql);
  }
}

/** A refresh-token hook can require signed deliveries (the deploy-hook plugin). */
class ApplicationWebhookSecret extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "applications" add column "webhook_secret" text null;`);
  }
}

export const applicationMigrations = [
  { name: 'Migration20261123000100_application_init', class: ApplicationInit },
  { name: 'Migration20270110000000_application_webhook_secret', class: ApplicationWebhookSecret },
];
