// Schema history of the git provider tables. Never edit a migration that has shipped: add one.
import { Migration } from '@berth/core';

class GitProviderInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "git_providers" ("git_provider_id" varchar(32) not null, "name" varchar(255) not null, "provider_type" varchar(32) not null, "organization_id" varchar(32) not null references "organizations" ("id") on delete cascade deferrable initially deferred, "user_id" varchar(32) not null references "users" ("id") on delete cascade deferrable initially deferred, "shared_with_organization" boolean not null default false, "created_at" timestamptz not null, primary key ("git_provider_id"));`,
    );
    // Serves both the organization filter and the newest-first order of gitProvider.getAll.
    this.addSql(`create index "git_providers_organization_id_created_at_index" on "git_providers" ("organization_id", "created_at");`);
    this.addSql(
      `create table "github_providers" ("github_id" varchar(32) not null, "git_provider_id" varchar(32) not null references "git_providers" ("git_provider_id") on delete cascade deferrable initially deferred, "github_app_name" text null, "github_app_id" int null, "github_client_id" text null, "github_client_secret" text null, "github_installation_id" varchar(255) null, "github_private_key" text null, "github_webhook_secret" text null, "github_url" varchar(255) not null default 'https://github.com', primary key ("github_id"));`,
    );
    this.addSql(`alter table "github_providers" add constraint "github_providers_git_provider_id_unique" unique ("git_provider_id");`);
  }
}

class GitlabInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "gitlab_providers" ("gitlab_id" varchar(32) not null, "git_provider_id" varchar(32) not null references "git_providers" ("git_provider_id") on delete cascade deferrable initially deferred, "gitlab_url" varchar(255) not null default 'https://gitlab.com', "gitlab_internal_url" varchar(255) null, "application_id" varchar(255) null, "redirect_uri" varchar(255) null, "secret" text null, "access_token" text null, "refresh_token" text null, "group_name" varchar(255) null, "expires_at" bigint null, primary key ("gitlab_id"));`,
    );
    this.addSql(`alter table "gitlab_providers" add constraint "gitlab_providers_git_provider_id_unique" unique ("git_provider_id");`);
  }
}

class BitbucketInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "bitbucket_providers" ("bitbucket_id" varchar(32) not null, "git_provider_id" varchar(32) not null references "git_providers" ("git_provider_id") on delete cascade deferrable initially deferred, "bitbucket_username" varchar(255) null, "bitbucket_email" varchar(255) null, "app_password" text null, "api_token" text null, "bitbucket_workspace_name" varchar(255) null, primary key ("bitbucket_id"));`,
    );
    this.addSql(`alter table "bitbucket_providers" add constraint "bitbucket_providers_git_provider_id_unique" unique ("git_provider_id");`);
  }
}

class GiteaInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "gitea_providers" ("gitea_id" varchar(32) not null, "git_provider_id" varchar(32) not null references "git_providers" ("git_provider_id") on delete cascade deferrable initially deferred, "gitea_url" varchar(255) not null default 'https://gitea.com', "gitea_internal_url" varchar(255) null, "redirect_uri" varchar(255) null, "client_id" varchar(255) null, "client_secret" text null, "access_token" text null, "refresh_token" text null, "expires_at" bigint null, "scopes" varchar(255) null, "last_authenticated_at" bigint null, "gitea_username" varchar(255) null, "organization_name" varchar(255) null, primary key ("gitea_id"));`,
    );
    this.addSql(`alter table "gitea_providers" add constraint "gitea_providers_git_provider_id_unique" unique ("git_provider_id");`);
  }
}

class GitConnectionsInit extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "git_connections" ("connection_id" varchar(32) not null, "git_provider_id" varchar(32) not null references "git_providers" ("git_provider_id") on delete cascade deferrable initially deferred, "settings" jsonb not null, "secrets" jsonb not null, primary key ("connection_id"));`,
    );
    this.addSql(`alter table "git_connections" add constraint "git_connections_git_provider_id_unique" unique ("git_provider_id");`);
  }
}

/**
 * Bitbucket's connections move into the generic record its provider now declares (the peer's
 * fields as its settings and secrets): same ids, so the workloads' bitbucketId still names them;
 * the sealed values move as they are (one SecretBox seals both).
 */
class BitbucketIntoConnections extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `insert into "git_connections" ("connection_id", "git_provider_id", "settings", "secrets") select "bitbucket_id", "git_provider_id", jsonb_build_object('bitbucketUsername', "bitbucket_username", 'bitbucketEmail', "bitbucket_email", 'bitbucketWorkspaceName', "bitbucket_workspace_name"), jsonb_build_object('apiToken', "api_token", 'appPassword', "app_password") from "bitbucket_providers";`,
    );
    this.addSql(`drop table "bitbucket_providers";`);
  }
}

/**
 * GitLab's and Gitea's connections move into the generic record their providers now declare, as
 * Bitbucket's did: same ids, sealed values as they are, numbers (expiry, last test) as numbers.
 */
class OAuthForgesIntoConnections extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `insert into "git_connections" ("connection_id", "git_provider_id", "settings", "secrets") select "gitlab_id", "git_provider_id", jsonb_build_object('gitlabUrl', "gitlab_url", 'gitlabInternalUrl', "gitlab_internal_url", 'applicationId', "application_id", 'redirectUri', "redirect_uri", 'groupName', "group_name", 'expiresAt', "expires_at"), jsonb_build_object('secret', "secret", 'accessToken', "access_token", 'refreshToken', "refresh_token") from "gitlab_providers";`,
    );
    this.addSql(
      `insert into "git_connections" ("connection_id", "git_provider_id", "settings", "secrets") select "gitea_id", "git_provider_id", jsonb_build_object('giteaUrl', "gitea_url", 'giteaInternalUrl', "gitea_internal_url", 'redirectUri', "redirect_uri", 'clientId', "client_id", 'expiresAt', "expires_at", 'scopes', "scopes", 'lastAuthenticatedAt', "last_authenticated_at", 'giteaUsername', "gitea_username", 'organizationName', "organization_name"), jsonb_build_object('clientSecret', "client_secret", 'accessToken', "access_token", 'refreshToken', "refresh_token") from "gitea_providers";`,
    );
    this.addSql(`drop table "gitlab_providers";`);
    this.addSql(`drop table "gitea_providers";`);
  }
}

/**
 * GitHub's App connections move into the generic record its provider now declares, the last of
 * the four: same ids, sealed values as they are, the App id as a number.
 */
class GithubIntoConnections extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `insert into "git_connections" ("connection_id", "git_provider_id", "settings", "secrets") select "github_id", "git_provider_id", jsonb_build_object('githubAppName', "github_app_name", 'githubAppId', "github_app_id", 'githubClientId', "github_client_id", 'githubInstallationId', "github_installation_id", 'githubUrl', "github_url"), jsonb_build_object('githubClientSecret', "github_client_secret", 'githubPrivateKey', "github_private_key", 'githubWebhookSecret', "github_webhook_secret") from "github_providers";`,
    );
    this.addSql(`drop table "github_providers";`);
  }
}

export const gitProviderMigrations = [
  { name: 'Migration20261126000100_git_provider_init', class: GitProviderInit },
  { name: 'Migration20261126000200_gitlab_providers', class: GitlabInit },
  { name: 'Migration20261127000100_bitbucket_providers', class: BitbucketInit },
  { name: 'Migration20261127000200_gitea_providers', class: GiteaInit },
  { name: 'Migration20261206230000_git_connections', class: GitConnectionsInit },
  { name: 'Migration20261207030000_bitbucket_into_connections', class: BitbucketIntoConnections },
  { name: 'Migration20261207040000_oauth_forges_into_connections', class: OAuthForgesIntoConnections },
  { name: 'Migration20261207050000_github_into_connections', class: GithubIntoConnections },
];
