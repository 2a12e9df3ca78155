// Schema history of the mounts table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

const owners = ['application', 'postgres', 'mariadb', 'mongo', 'mysql', 'redis', 'compose'];

class MountsInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "mounts" (
      "mount_id" varchar(32) not null primary key,
      "type" varchar(8) not null check ("type" in ('bind', 'volume', 'file')),
      "host_path" text null,
      "volume_name" varchar(128) null,
      "file_path" text null,
      "content" text null,
      "mount_path" text not null,
      "service_type" varchar(16) not null check ("service_type" in ('application', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'compose')),
      ${owners.map(o => `"${o}_id" varchar(32) null,`).join('\n      ')}
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "created_at" timestamptz not null);`);
    // The workload tables belong to other plugins (which may be disabled), so no foreign keys:
    // they call MountDirectory.removeForService when a workload goes. One partial index per
    // owner column serves listByServiceId and forServices, and holds one mount per path of a
    // workload (the engine refuses two mounts at one target).
    for (const o of owners) {
      this.addSql(`create unique index "mounts_${o}_id_mount_path_unique" on "mounts" ("${o}_id", "mount_path") where "${o}_id" is not null;`);
    }
    this.addSql(`create index "mounts_organization_id_index" on "mounts" ("organization_id");`);
  }
}

export const mountMigrations = [{ name: 'Migration20261123000400_mounts_init', class: MountsInit }];
