// Schema history of the preview records. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class PreviewInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "preview_deployments" (
      "preview_deployment_id" varchar(32) not null primary key,
      "application_id" varchar(32) not null references "applications" ("application_id") on delete cascade, -- kind-names: the application a preview is made from
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "branch" varchar(255) not null,
      "pull_request_id" varchar(64) not null,
      "pull_request_number" varchar(16) not null,
      "pull_request_url" text not null,
      "pull_request_title" text not null,
      "pull_request_comment_id" varchar(64) not null,
      "preview_status" varchar(8) not null,
      "app_name" varchar(63) not null unique,
      "domain_id" varchar(32) null,
      "head_sha" varchar(64) null,
      "created_at" timestamptz not null,
      "expires_at" timestamptz null);`);
    // One preview per pull request of an application.
    this.addSql(`alter table "preview_deployments" add constraint "preview_deployments_application_id_pull_request_id_unique" unique ("application_id", "pull_request_id");`);
  }
}

/** A fork's pull request: the repository its branch is cloned from. */
class PreviewForkRepository extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "preview_deployments" add column "head_repository" varchar(255) null;`);
  }
}

export const previewMigrations = [
  { name: 'Migration20270120000000_preview_init', class: PreviewInit },
  { name: 'Migration20270129000000_preview_fork_repository', class: PreviewForkRepository },
];
