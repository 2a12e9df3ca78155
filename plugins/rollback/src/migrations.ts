// Schema history of the rollbacks table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class RollbackInit extends Migration {
  override async up(): Promise<void> {
    // The workload tables and the deployments belong to other plugins (which may be disabled), so no
    // foreign key to them: a kind calls WorkloadRollbacks.removeForWorkload when a workload goes.
    this.addSql(`create table "rollbacks" (
      "rollback_id" varchar(32) not null primary key,
      "deployment_id" varchar(32) not null,
      "service_type" varchar(32) not null,
      "service_id" varchar(64) not null,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "server_id" varchar(64) null,
      "version" int not null,
      "image" text not null,
      "registry_id" varchar(64) null,
      "release" text not null,
      "created_at" timestamptz not null);`);
    // Release numbers never come back (a deleted release's number is not given again), across
    // processes: a sequence, as the peer's serial.
    this.addSql(`create sequence "rollbacks_version_seq";`);
    // One number per release of a workload; also the workload's releases, newest first.
    this.addSql(`create unique index "rollbacks_service_version_unique" on "rollbacks" ("service_type", "service_id", "version");`);
    // deployment.allByType's join.
    this.addSql(`create index "rollbacks_deployment_id_index" on "rollbacks" ("deployment_id");`);
    this.addSql(`create index "rollbacks_organization_id_index" on "rollbacks" ("organization_id");`);
  }
}

export const rollbackMigrations = [{ name: 'Migration20271207000200_rollback_init', class: RollbackInit }];
