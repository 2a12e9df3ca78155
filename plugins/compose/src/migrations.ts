// Schema history of the compose_stacks table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';
import { workloadTableSql } from '@berth/plugin-workloads';

class ComposeInit extends Migration {
  override async up(): Promise<void> {
    const own = [
      '"source_type" varchar(16) not null',
      '"compose_type" varchar(16) not null',
      '"compose_status" varchar(8) not null',
      '"refresh_token" varchar(255) null',
      '"compose_file" text not null',
    ];
    for (const sql of workloadTableSql('compose_stacks', 'compose_id', own, '      ')) this.addSql(sql);
  }
}

/** A refresh-token hook can require signed deliveries (the deploy-hook plugin). */
class ComposeWebhookSecret extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "compose_stacks" add column "webhook_secret" text null;`);
  }
}

export const composeMigrations = [
  { name: 'Migration20261206000000_compose_init', class: ComposeInit },
  { name: 'Migration20270110000100_compose_webhook_secret', class: ComposeWebhookSecret },
];
