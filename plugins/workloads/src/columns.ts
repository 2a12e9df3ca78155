// The columns every workload kind's table has (application, compose, each database kind): what
// the record is called and where it lives (environment, organization, host). Their entity
// properties and the create-table statements of the kinds' first migrations come from here, so a
// kind names only its own columns.
import { p } from '@berth/core';

/** What the record is called and where it lives: spread right after the kind's id property. */
export const workloadColumns = () => ({
  name: p.string(),
  appName: p.string().length(63),
  description: p.text().nullable(),
  environmentId: p.string().length(32),
  organizationId: p.string().length(32),
  serverId: p.string().length(32).nullable(),
});

/** The columns of a kind that deploys from pushes to its refresh-token URL. */
export const pushColumns = () => ({
  refreshToken: p.string().nullable(),
  /** The secret push deliveries to its refresh-token URL are signed with: SecretBox-sealed, null when none. */
  webhookSecret: p.text().nullable(),
});

/**
 * The statements of a kind's first migration: its table (the id column, the shared columns, the
 * kind's `own` columns, then settings, sealed and created_at) and its indexes. Migrations are
 * history: what this answers for a table that has shipped must never change (a new column is a
 * new migration). `indent`: the column lines' indentation as each migration shipped it.
 */
export function workloadTableSql(table: string, idColumn: string, own: string[], indent: string): string[] {
  const columns = [
    `"${idColumn}" varchar(32) not null primary key`,
    `"name" varchar(255) not null`,
    `"app_name" varchar(63) not null`,
    `"description" text null`,
    `"environment_id" varchar(32) not null references "environments" ("environment_id") on delete cascade deferrable initially deferred`,
    `"organization_id" varchar(32) not null references "organizations" ("id") on delete cascade`,
    `"server_id" varchar(32) null`,
    ...own,
    `"settings" jsonb not null`,
    `"sealed" text not null`,
    `"created_at" timestamptz not null`,
  ];
  return [
    `create table "${table}" (\n${columns.map(c => indent + c).join(',\n')});`,
    // A Swarm service name (or compose project name) is unique per host.
    `create unique index "${table}_host_app_name_unique" on "${table}" (coalesce("server_id", ''), "app_name");`,
    `create index "${table}_environment_id_index" on "${table}" ("environment_id", "created_at");`,
    `create index "${table}_organization_id_index" on "${table}" ("organization_id", "created_at");`,
  ];
}
