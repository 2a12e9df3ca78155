// Schema history of the patches table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class PatchInit extends Migration {
  override async up(): Promise<void> {
    // The workload tables belong to other plugins (which may be disabled), so no foreign key to
    // them: a kind calls WorkloadPatches.removeForWorkload when a workload goes.
    this.addSql(`create table "patches" (
      "patch_id" varchar(32) not null primary key,
      "type" varchar(8) not null check ("type" in ('create', 'update', 'delete')),
      "file_path" text not null,
      "enabled" boolean not null default true,
      "content" text not null,
      "service_type" varchar(32) not null,
      "service_id" varchar(64) not null,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "created_at" timestamptz not null,
      "updated_at" timestamptz null);`);
    // One patch per file of a workload (the peer's unique filePath per application or compose).
    // The path is hashed: a long path in several bytes per character would not fit a btree entry.
    // It also serves byEntityId and the deploy's read (by workload).
    this.addSql(`create unique index "patches_service_file_unique" on "patches" ("service_type", "service_id", md5("file_path"));`);
    this.addSql(`create index "patches_organization_id_index" on "patches" ("organization_id");`);
  }
}

export const patchMigrations = [{ name: 'Migration20270725000000_patch_init', class: PatchInit }];
