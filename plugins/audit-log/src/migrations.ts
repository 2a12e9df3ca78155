// Schema history of the audit log. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class AuditLogInit extends Migration {
  override async up(): Promise<void> {
    // seq: the insert order the sealer takes unsealed rows in; chain_index: the sealed order.
    this.addSql(`create table "audit_log" (
      "id" varchar(32) not null, "seq" bigserial not null, "organization_id" varchar(32) null, "user_id" varchar(32) null,
      "user_email" text null, "user_role" varchar(255) null, "actor" varchar(255) not null, "via" varchar(255) null,
      "credential_id" varchar(255) null, "action" varchar(255) not null, "resource_type" varchar(255) not null,
      "resource_id" text null, "resource_name" text null, "procedure" varchar(255) not null, "target_ids" jsonb not null,
      "input" jsonb null, "outcome" varchar(255) not null, "error_code" varchar(255) null, "error_message" text null,
      "request_id" varchar(255) not null, "address" varchar(255) null, "user_agent" text null,
      "created_at" timestamptz not null, "chain_index" bigint null, "hash" varchar(255) null,
      primary key ("id"), unique ("seq"), unique ("chain_index"));`);
    this.addSql(`create index "audit_log_organization_created_idx" on "audit_log" ("organization_id", "created_at");`);
    this.addSql(`create index "audit_log_unsealed_idx" on "audit_log" ("seq") where "chain_index" is null;`);
    // The chain's ends: the anchor (the last entry retention removed: verify starts after it) and
    // the head (the last sealed entry: a removed tail is detected).
    this.addSql(`create table "audit_log_chain" (
      "key" varchar(16) not null check ("key" = 'chain'), "anchor_index" bigint not null, "anchor_hash" varchar(255) not null,
      "anchor_at" timestamptz null, "head_index" bigint not null, "head_hash" varchar(255) not null, primary key ("key"));`);
    // Its one row is made at the first seal (a new database holds no record: berth db copy needs it empty).
  }
}

export const auditLogMigrations = [{ name: 'Migration20270901000000_audit_log_init', class: AuditLogInit }];
