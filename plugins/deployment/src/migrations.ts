// Schema history of the deployments table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class DeploymentInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "deployments" ("deployment_id" varchar(32) not null, "title" text not null, "description" text null, "status" varchar(16) not null, "action" varchar(64) not null, "target_type" varchar(32) not null, "target_id" varchar(64) not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade, "server_id" varchar(64) null, "log_path" text not null, "error_message" text null, "created_at" timestamptz not null, "started_at" timestamptz null, "finished_at" timestamptz null, primary key ("deployment_id"));`,
    );
    // A target's history, newest first, and the per-target FIFO of the dispatcher.
    this.addSql(`create index "deployments_target_type_target_id_created_at_index" on "deployments" ("target_type", "target_id", "created_at");`);
    // The dispatcher only ever looks at unfinished work; keep that lookup small.
    this.addSql(`create index "deployments_active_index" on "deployments" ("created_at") where "status" in ('queued', 'running');`);
    this.addSql(`create index "deployments_organization_id_created_at_index" on "deployments" ("organization_id", "created_at");`);
  }
}

class DeploymentCheckout extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "deployments" add column "checkout" varchar(255) null;`);
  }
}

/** The build server a deployment built on (an application's buildServerId, recorded when its build starts there). */
class DeploymentBuildServer extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "deployments" add column "build_server_id" varchar(64) null;`);
  }
}

class DeploymentQueueSettings extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "deployment_queue_settings" ("host_key" varchar(32) not null, "builds_concurrency" int null, "remote_servers_only" boolean not null default false, primary key ("host_key"));`,
    );
  }
}

/** A rollback deployment names the release it rolls out (the rollback plugin's entry; no foreign key: that plugin may be disabled). */
class DeploymentRollsBack extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "deployments" add column "rolls_back" varchar(32) null;`);
  }
}

export const deploymentMigrations = [
  { name: 'Migration20261123001000_deployment_init', class: DeploymentInit },
  { name: 'Migration20270128000200_deployment_checkout', class: DeploymentCheckout },
  { name: 'Migration20270207000100_deployment_build_server', class: DeploymentBuildServer },
  { name: 'Migration20270710000000_deployment_queue_settings', class: DeploymentQueueSettings },
  { name: 'Migration20271207000100_deployment_rolls_back', class: DeploymentRollsBack },
];
