// Schema history of the mounts table. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

// The owner columns of the first schema (one per kind then known); the second migration folds them into service_id.
const owners = ['application', 'postgres', 'mariadb', 'mongo', 'mysql', 'redis', 'compose']; // kind-names: the schema as it shipped

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
      "service_type" varchar(16) not null check ("service_type" in ('application', 'postgres', 'mysql', 'mariadb', 'mongo', 'redis', 'compose')), -- kind-names: the schema as it shipped
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

/**
 * The owner becomes (service_type, service_id), so any registered kind can own mounts: the
 * per-kind columns are folded into service_id and dropped, and the list of kinds in the
 * check constraint goes with them.
 */
class MountsOwnedByKind extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "mounts" add column "service_id" varchar(64) null;`);
    this.addSql(`update "mounts" set "service_id" = coalesce(${owners.map(o => `"${o}_id"`).join(', ')});`);
    this.addSql(`alter table "mounts" alter column "service_id" set not null;`);
    this.addSql(`alter table "mounts" alter column "service_type" type varchar(32);`);
    this.addSql(`alter table "mounts" drop constraint if exists "mounts_service_type_check";`);
    for (const o of owners) {
      this.addSql(`drop index if exists "mounts_${o}_id_mount_path_unique";`);
      this.addSql(`alter table "mounts" drop column "${o}_id";`);
    }
    this.addSql(`create unique index "mounts_owner_mount_path_unique" on "mounts" ("service_type", "service_id", "mount_path");`);
  }
}

/**
 * Berth now creates mount volumes itself, labelled, and refuses to mount a volume that is not a
 * mount volume of the organization. The volume mounts that exist at upgrade had theirs made by
 * Swarm, unlabelled (the engine cannot relabel a volume): they adopt it, so they still deploy.
 */
class MountsVolumeAdopted extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "mounts" add column "volume_adopted" boolean not null default false;`);
    this.addSql(`update "mounts" set "volume_adopted" = true where "type" = 'volume';`);
  }
}

export const mountMigrations = [
  { name: 'Migration20261123000400_mounts_init', class: MountsInit },
  { name: 'Migration20261124100000_mounts_owned_by_kind', class: MountsOwnedByKind },
  { name: 'Migration20261202000000_mounts_volume_adopted', class: MountsVolumeAdopted },
];
