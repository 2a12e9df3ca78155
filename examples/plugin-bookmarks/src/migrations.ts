import { Migration } from '@berth/core';

class BookmarksInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "ext_bookmarks" ("bookmark_id" varchar(32) not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "project_id" varchar(32) null, "url" text not null, "title" varchar(255) not null, "weight" int not null default 0, "created_at" timestamptz not null, primary key ("bookmark_id"));`,
    );
    this.addSql(`create index "ext_bookmarks_organization_id_index" on "ext_bookmarks" ("organization_id");`);
  }
}

export const bookmarkMigrations = [{ name: 'Migration20261122120000_ext_bookmarks_init', class: BookmarksInit }];
