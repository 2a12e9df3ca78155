// Schema history of the user plugin's tables (the accounts themselves are the kernel's). Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class TemplateBookmarksInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "template_bookmarks" ("id" varchar(32) not null, "user_id" varchar(32) not null references "users" ("id") on delete cascade, "template_id" varchar(255) not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    // A template once per user; it also serves the reads of a user's bookmarks.
    this.addSql(`alter table "template_bookmarks" add constraint "template_bookmarks_user_id_template_id_unique" unique ("user_id", "template_id");`);
  }
}

export const userMigrations = [{ name: 'Migration20270725000000_template_bookmarks', class: TemplateBookmarksInit }];
