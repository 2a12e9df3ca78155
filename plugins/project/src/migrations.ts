// Schema history of the projects table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class ProjectInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "projects" ("project_id" varchar(32) not null, "name" varchar(255) not null, "description" text null, "env" text not null default '', "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade, "created_at" timestamptz not null, primary key ("project_id"));`,
    );
    // Serves both the organization filter and the newest-first order of project.all.
    this.addSql(`create index "projects_organization_id_created_at_index" on "projects" ("organization_id", "created_at");`);
  }
}

export const projectMigrations = [{ name: 'Migration20261122000100_project_init', class: ProjectInit }];
