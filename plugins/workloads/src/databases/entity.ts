// One table per database kind (`db_<kind>`), all of the same shape, made from the kind's id:
// columns for what the platform filters or acts on, the Swarm settings in a JSON column, and
// the secrets (passwords, env) sealed in one text column.
import { defineEntity, p, Migration, type MigrationObject } from '@berth/core';
import { workloadColumns, workloadTableSql } from '../columns.ts';

export interface DatabaseRow {
  id: string;
  name: string;
  appName: string;
  description: string | null;
  environmentId: string;
  organizationId: string;
  serverId: string | null;
  applicationStatus: string;
  externalPort: number | null;
  databaseName: string | null;
  databaseUser: string | null;
  settings: Record<string, unknown>;
  /**
   * The named volume holding the data: `berth-<kind>-<id>-data` for databases created since
   * volumes are labelled; `<appName>-data` (unlabelled, adopted) for older ones.
   */
  dataVolume: string;
  /** SecretBox-sealed JSON: databasePassword, databaseRootPassword, env. */
  sealed: string;
  createdAt: Date;
}

const KIND = /^[a-z][a-z0-9]{0,30}$/;

export const tableOf = (kind: string) => {
  if (!KIND.test(kind)) throw new Error(`Invalid database kind "${kind}": lower-case letters and digits, starting with a letter`);
  return `db_${kind}`;
};

export function databaseEntity(kind: string) {
  return defineEntity({
    name: `${kind.charAt(0).toUpperCase()}${kind.slice(1)}Database`,
    tableName: tableOf(kind),
    properties: {
      id: p.string().length(32).primary(),
      ...workloadColumns(),
      applicationStatus: p.string().length(8),
      externalPort: p.integer().nullable(),
      databaseName: p.string().nullable(),
      databaseUser: p.string().nullable(),
      settings: p.json<Record<string, unknown>>(),
      dataVolume: p.string().length(255),
      sealed: p.text(),
      createdAt: p.datetime(),
    },
  });
}

/** The kind's table, created by its plugin's migration (named after the kind, so kinds never collide). */
export function databaseMigrations(kind: string): MigrationObject[] {
  const table = tableOf(kind);
  class DatabaseInit extends Migration {
    override async up(): Promise<void> {
      const own = ['"application_status" varchar(8) not null', '"external_port" int null', '"database_name" varchar(255) null', '"database_user" varchar(255) null'];
      for (const sql of workloadTableSql(table, 'id', own, '        ')) this.addSql(sql);
    }
  }
  // The records that exist at upgrade keep the volume Swarm made for them implicitly
  // (`<appName>-data`, unlabelled: the engine cannot relabel a volume): they adopt it by name.
  class DatabaseDataVolume extends Migration {
    override async up(): Promise<void> {
      this.addSql(`alter table "${table}" add column "data_volume" varchar(255) null;`);
      this.addSql(`update "${table}" set "data_volume" = "app_name" || '-data';`);
      this.addSql(`alter table "${table}" alter column "data_volume" set not null;`);
    }
  }
  return [
    { name: `Migration20261124000000_db_${kind}_init`, class: DatabaseInit },
    { name: `Migration20261201000000_db_${kind}_data_volume`, class: DatabaseDataVolume },
  ];
}
