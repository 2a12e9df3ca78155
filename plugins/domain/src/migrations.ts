// Schema history of the domain plugin's tables. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class DomainsInit extends Migration {
  override async up(): Promise<void> {
    // One sequence for the proxy's names (routers, middlewares), shared by domains and redirects
    // so a name never repeats across them.
    this.addSql(`create sequence "proxy_config_key_seq";`);
    // The workloads' tables belong to other plugins (which may be disabled): no foreign key; the
    // kit drops a workload's domains when the workload is removed.
    this.addSql(`create table "domains" (
      "domain_id" varchar(32) not null primary key,
      "host" varchar(253) not null,
      "https" boolean not null,
      "port" integer null check ("port" between 1 and 65535),
      "path" varchar(255) null,
      "internal_path" varchar(255) null,
      "strip_path" boolean not null,
      "service_name" varchar(63) null,
      "domain_type" varchar(16) null,
      "unique_config_key" integer not null unique,
      "certificate_type" varchar(16) not null check ("certificate_type" in ('letsencrypt', 'none', 'custom')),
      "custom_cert_resolver" varchar(255) null,
      "custom_entrypoint" varchar(255) null,
      "middlewares" jsonb null,
      "preview_deployment_id" varchar(32) null,
      "service_type" varchar(32) not null,
      "service_id" varchar(32) not null,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "created_at" timestamptz not null);`);
    this.addSql(`create index "domains_service_index" on "domains" ("service_type", "service_id", "created_at");`);
    this.addSql(`create index "domains_host_index" on "domains" (lower("host"));`);
    this.addSql(`create table "redirects" (
      "redirect_id" varchar(32) not null primary key,
      "regex" text not null,
      "replacement" text not null,
      "permanent" boolean not null,
      "unique_config_key" integer not null unique,
      "service_type" varchar(32) not null,
      "service_id" varchar(32) not null,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "created_at" timestamptz not null);`);
    this.addSql(`create index "redirects_service_index" on "redirects" ("service_type", "service_id", "created_at");`);
    this.addSql(`create table "securities" (
      "security_id" varchar(32) not null primary key,
      "username" varchar(255) not null,
      "password_sealed" text not null,
      "password_hash_sealed" text not null,
      "service_type" varchar(32) not null,
      "service_id" varchar(32) not null,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "created_at" timestamptz not null,
      unique ("service_type", "service_id", "username"));`);
    this.addSql(`create table "certificates" (
      "certificate_id" varchar(32) not null primary key,
      "name" varchar(255) not null,
      "certificate_data" text not null,
      "private_key_sealed" text not null,
      "certificate_path" varchar(64) not null unique,
      "auto_renew" boolean null,
      "expires_at" timestamptz null,
      "subjects" jsonb not null,
      "server_id" varchar(32) null,
      "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade,
      "created_at" timestamptz not null);`);
  }
}

/** The peer's `enabled`: a domain switched off keeps its record and loses its routes. Existing domains stay on. */
class DomainsEnabled extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "domains" add column "enabled" boolean not null default true;`);
  }
}

/** The peer's `forwardAuthEnabled` (forwardAuth.enable): off for every existing domain. */
class DomainsForwardAuth extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "domains" add column "forward_auth_enabled" boolean not null default false;`);
  }
}

export const domainMigrations = [
  { name: 'Migration20261124070000_domains_init', class: DomainsInit },
  { name: 'Migration20270207000000_domains_enabled', class: DomainsEnabled },
  { name: 'Migration20270810000000_domains_forward_auth', class: DomainsForwardAuth },
];
