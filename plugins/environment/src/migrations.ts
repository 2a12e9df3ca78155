// Schema history of the environments table. Never edit a migration that has shipped: add one.
// Sorts after the project plugin's migration, whose table it references.
import { Migration } from '@berth/core';

class EnvironmentInit extends Migration {
  override async up(): Promise<void> {
    // The project reference is checked at commit: a project and its environments are stored in
    // one flush, and the ORM cannot order inserts by a relation it does not know about.
    this.addSql(
      `create table "environments" ("environment_id" varchar(32) not null, "name" varchar(255) not null, "description" text null, "env" text not null default '', "is_default" boolean not null default false, "project_id" varchar(32) not null references "projects" ("project_id") on delete cascade deferrable initially deferred, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade, "created_at" timestamptz not null, primary key ("environment_id"));`,
    );
    this.addSql(`create index "environments_organization_id_index" on "environments" ("organization_id");`);
    this.addSql(`alter table "environments" add constraint "environments_project_id_name_unique" unique ("project_id", "name");`);
    // At most one default environment per project.
    this.addSql(`create unique index "environments_project_id_default_unique" on "environments" ("project_id") where "is_default";`);
  }
}

export const environmentMigrations = [{ name: 'Migration20261122000200_environment_init', class: EnvironmentInit }];
