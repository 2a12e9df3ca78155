// Schema history of the whitelabeling table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class WhitelabelingInit extends Migration {
  override async up(): Promise<void> {
    // One row for the instance: the check keeps it the only one.
    this.addSql(`create table "whitelabeling" ("key" varchar(16) not null check ("key" = 'instance'), "config" jsonb not null, "updated_at" timestamptz not null, primary key ("key"));`);
  }
}

export const whitelabelingMigrations = [{ name: 'Migration20270801000000_whitelabeling_init', class: WhitelabelingInit }];
