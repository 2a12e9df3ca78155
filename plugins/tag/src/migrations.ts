// Schema history of the tags and project_tags tables. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class TagInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "tags" ("tag_id" varchar(32) not null, "name" varchar(255) not null, "color" varchar(255) null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade, "created_at" timestamptz not null, primary key ("tag_id"));`,
    );
    // A name once per organization (the peer's unique_org_tag_name); it also serves tag.all's filter and order.
    this.addSql(`alter table "tags" add constraint "tags_organization_id_name_unique" unique ("organization_id", "name");`);
    this.addSql(
      `create table "project_tags" ("id" varchar(32) not null, "project_id" varchar(32) not null references "projects" ("project_id") on delete cascade, "tag_id" varchar(32) not null references "tags" ("tag_id") on delete cascade, primary key ("id"));`,
    );
    // A tag once per project (the peer's unique_project_tag); it also serves the reads by project.
    this.addSql(`alter table "project_tags" add constraint "project_tags_project_id_tag_id_unique" unique ("project_id", "tag_id");`);
    // Removing a tag removes its links through the foreign key: found by tag_id.
    this.addSql(`create index "project_tags_tag_id_index" on "project_tags" ("tag_id");`);
  }
}

export const tagMigrations = [{ name: 'Migration20270215000000_tag_init', class: TagInit }];
