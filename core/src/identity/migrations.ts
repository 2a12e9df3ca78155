// Schema history of the identity tables. Never edit a migration that has shipped: add one.
import { Migration } from '@mikro-orm/migrations';

class IdentityInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "users" ("id" varchar(32) not null, "email" varchar(255) not null, "password_hash" varchar(255) null, "first_name" varchar(255) not null default '', "last_name" varchar(255) not null default '', "image" varchar(255) null, "two_factor_secret" text null, "two_factor_enabled" boolean not null default false, "default_organization_id" varchar(32) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);
    this.addSql(
      `create table "organizations" ("id" varchar(32) not null, "name" varchar(255) not null, "slug" varchar(255) null, "logo" varchar(255) null, "owner_id" varchar(32) not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create table "members" ("id" varchar(32) not null, "user_id" varchar(32) not null references "users" ("id") on delete cascade deferrable initially deferred, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "role" text not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "members_user_id_index" on "members" ("user_id");`);
    this.addSql(`create index "members_organization_id_index" on "members" ("organization_id");`);
    this.addSql(`alter table "members" add constraint "members_user_id_organization_id_unique" unique ("user_id", "organization_id");`);
    this.addSql(`alter table "members" add constraint "members_role_check" check ("role" in ('owner', 'admin', 'member'));`);
    this.addSql(
      `create table "sessions" ("id" varchar(32) not null, "token_hash" varchar(64) not null, "user_id" varchar(32) not null references "users" ("id") on delete cascade deferrable initially deferred, "organization_id" varchar(32) null references "organizations" ("id") on delete set null deferrable initially deferred, "kind" text not null, "attempts" int not null default 0, "expires_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "sessions" add constraint "sessions_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "sessions_user_id_index" on "sessions" ("user_id");`);
    this.addSql(`alter table "sessions" add constraint "sessions_kind_check" check ("kind" in ('session', 'token', 'pending2fa'));`);
    this.addSql(
      `create table "api_keys" ("id" varchar(32) not null, "name" varchar(32) not null, "prefix" varchar(255) null, "start" varchar(16) not null, "key_hash" varchar(64) not null, "user_id" varchar(32) not null references "users" ("id") on delete cascade deferrable initially deferred, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "metadata" jsonb null, "expires_at" timestamptz null, "last_used_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);
    this.addSql(`create index "api_keys_user_id_index" on "api_keys" ("user_id");`);
    this.addSql(
      `create table "invitations" ("id" varchar(32) not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "email" varchar(255) not null, "role" text not null, "status" text not null default 'pending', "token_hash" varchar(64) not null, "inviter_id" varchar(32) not null, "expires_at" timestamptz not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "invitations_organization_id_index" on "invitations" ("organization_id");`);
    this.addSql(`alter table "invitations" add constraint "invitations_role_check" check ("role" in ('admin', 'member'));`);
    this.addSql(`alter table "invitations" add constraint "invitations_status_check" check ("status" in ('pending', 'accepted', 'canceled'));`);
  }
}

/** The last TOTP time step a user signed in with: a code is accepted once, never replayed within its window. */
class TwoFactorLastStep extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "users" add column "two_factor_last_step" bigint null;');
  }
}

/** One-time recovery codes of two-factor login, stored as SHA-256 hashes (a JSON array). */
class TwoFactorRecovery extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "users" add column "two_factor_recovery" text null;');
  }
}

/**
 * Roles and permissions: a member's role may name a custom role; the peer's switches and record
 * lists per member. The members from before keep what they had: every record (all_records), and
 * what members could do then (core/src/permissions.ts MEMBER_BEFORE_ROLES).
 */
class RolesAndGrants extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "members" drop constraint "members_role_check";');
    this.addSql('alter table "members" alter column "role" type varchar(50);');
    this.addSql(
      `alter table "members" add column "switches" jsonb not null default '[]', add column "all_records" boolean not null default false, add column "accessed_projects" jsonb not null default '[]', add column "accessed_environments" jsonb not null default '[]', add column "accessed_services" jsonb not null default '[]', add column "accessed_git_providers" jsonb not null default '[]', add column "accessed_servers" jsonb not null default '[]';`,
    );
    this.addSql(`update "members" set "all_records" = true;`);
    this.addSql(
      `create table "custom_roles" ("id" varchar(32) not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "role" varchar(50) not null, "permission" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql('create index "custom_roles_organization_id_index" on "custom_roles" ("organization_id");');
    this.addSql('alter table "custom_roles" add constraint "custom_roles_organization_id_role_unique" unique ("organization_id", "role");');
  }
}

export const identityMigrations = [
  { name: 'Migration20261122000000_core_identity', class: IdentityInit },
  { name: 'Migration20261123120000_core_identity_totp_step', class: TwoFactorLastStep },
  { name: 'Migration20261124070000_core_identity_recovery_codes', class: TwoFactorRecovery },
  { name: 'Migration20261207140000_core_identity_roles', class: RolesAndGrants },
];
