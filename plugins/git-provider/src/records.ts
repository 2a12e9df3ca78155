// The connection records as the API answers them (secrets never: their fields answer null), who in
// the organization may use one, the sealed columns of each forge's record, and the address rules a
// connection's URLs follow.
import { badRequest, forbidden, iso, type GitRepositoryRef, type GitSourceFields, type Role } from '@berth/core';
import type { BitbucketRow, GiteaRow, GitProviderRow, GithubRow, GitlabRow } from './entities.ts';
import type { BitbucketRowView, GiteaRowView, GithubRowView, GitlabRowView, GitProviderView } from './schemas.ts';
/** The columns of the github record that are sealed. */
export const GITHUB_SECRETS = ['githubClientSecret', 'githubPrivateKey', 'githubWebhookSecret'] as const;
/** The columns of the gitlab record that are sealed. */
export const GITLAB_SECRETS = ['secret', 'accessToken', 'refreshToken'] as const;
/** The columns of the bitbucket record that are sealed. */
export const BITBUCKET_SECRETS = ['apiToken', 'appPassword'] as const;
/** The columns of the gitea record that are sealed. */
export const GITEA_SECRETS = ['clientSecret', 'accessToken', 'refreshToken'] as const;
/** What an OAuth record (gitlab's, gitea's) keeps of its token pair. */
export type OAuthRow = { accessToken?: string | null; refreshToken?: string | null; expiresAt?: number | null; redirectUri?: string | null };

/** The workload field that names a connection, per built-in forge (the peer's tables); a forge declaring its own `connection` names it in its sourceFields.id. */
export const CONNECTION_FIELDS = { githubId: 'github', gitlabId: 'gitlab', bitbucketId: 'bitbucket', giteaId: 'gitea' } as const;

/** Who asks: an organization's owner or admin uses every connection of it; a member, those they made and those shared with the organization. */
export interface GitCaller {
  userId: string;
  role: Role;
}

/** Whether the caller may see and use the connection (no caller: Berth itself, e.g. a deploy, which runs whoever connected it). */
export const usable = (row: Pick<GitProviderRow, 'userId' | 'sharedWithOrganization'>, caller?: GitCaller | null): boolean =>
  !caller || caller.role !== 'member' || row.userId === caller.userId || row.sharedWithOrganization;

/** A member's refusal for a connection that is neither theirs nor shared; `field` is the input that named it. */
export const notShared = (field: string) =>
  forbidden(`${field}: this git provider connection is another member's and not shared with the organization (its owner may share it: gitProvider.toggleShare)`);

export interface NewGithub {
  name: string;
  githubAppName: string | null;
  githubAppId: number | null;
  githubClientId: string | null;
  githubClientSecret: string | null;
  githubWebhookSecret: string | null;
  githubPrivateKey: string | null;
  githubInstallationId?: string | null;
  githubUrl: string;
}

export const providerView = (r: GitProviderRow): GitProviderView => ({
  gitProviderId: r.gitProviderId,
  name: r.name,
  providerType: r.providerType,
  createdAt: iso(r.createdAt)!,
  organizationId: r.organizationId,
  userId: r.userId,
  sharedWithOrganization: r.sharedWithOrganization,
});

export const githubRowView = (g: GithubRow): GithubRowView => ({
  githubId: g.githubId,
  gitProviderId: g.gitProviderId,
  githubAppName: g.githubAppName ?? null,
  githubAppId: g.githubAppId ?? null,
  githubClientId: g.githubClientId ?? null,
  githubClientSecret: null,
  githubInstallationId: g.githubInstallationId ?? null,
  githubPrivateKey: null,
  githubWebhookSecret: null,
  githubUrl: g.githubUrl,
});

export const gitlabRowView = (g: GitlabRow): GitlabRowView => ({
  gitlabId: g.gitlabId,
  gitlabUrl: g.gitlabUrl,
  gitlabInternalUrl: g.gitlabInternalUrl ?? null,
  applicationId: g.applicationId ?? null,
  redirectUri: g.redirectUri ?? null,
  secret: null,
  accessToken: null,
  refreshToken: null,
  groupName: g.groupName ?? null,
  expiresAt: g.expiresAt ?? null,
  gitProviderId: g.gitProviderId,
});

export const bitbucketRowView = (b: BitbucketRow): BitbucketRowView => ({
  bitbucketId: b.bitbucketId,
  bitbucketUsername: b.bitbucketUsername ?? null,
  bitbucketEmail: b.bitbucketEmail ?? null,
  appPassword: null,
  apiToken: null,
  bitbucketWorkspaceName: b.bitbucketWorkspaceName ?? null,
  gitProviderId: b.gitProviderId,
});

export const giteaRowView = (g: GiteaRow): GiteaRowView => ({
  giteaId: g.giteaId,
  giteaUrl: g.giteaUrl,
  giteaInternalUrl: g.giteaInternalUrl ?? null,
  redirectUri: g.redirectUri ?? null,
  clientId: g.clientId ?? null,
  clientSecret: null,
  gitProviderId: g.gitProviderId,
  accessToken: null,
  refreshToken: null,
  expiresAt: g.expiresAt ?? null,
  scopes: g.scopes ?? null,
  lastAuthenticatedAt: g.lastAuthenticatedAt ?? null,
  giteaUsername: g.giteaUsername ?? null,
  organizationName: g.organizationName ?? null,
});

/** The peer's: a GitLab connection is usable once the OAuth flow gave it both tokens. */
export const gitlabAuthorized = (g: GitlabRow) => Boolean(g.accessToken && g.refreshToken);

export const configured = (g: GithubRow) => Boolean(g.githubAppId && g.githubPrivateKey && g.githubInstallationId);

/** A git host's web (or internal) address: an http(s) URL without user, query or fragment, no trailing slash. */
export function webUrlOf(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw badRequest(`${field}: is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badRequest(`${field}: must be an http(s) URL`);
  if (url.username || url.password || url.search || url.hash) throw badRequest(`${field}: must be a plain web address (no user, query or fragment)`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** The clone URL of a repository below a provider's web URL: `<base>/<owner>/<name>.git` (GitHub, GitLab, Gitea and Bitbucket alike). */
export const cloneUrlOf = (baseUrl: string, owner: string, name: string) => `${baseUrl.replace(/\/+$/, '')}/${owner}/${name}.git`;

/** A workload field's text, trimmed; null when absent or blank. */
export const textField = (fields: Record<string, unknown>, k: string) => {
  const v = fields[k];
  return typeof v === 'string' && v.trim() ? v.trim() : null;
};

/** The connection and repository a workload's fields name (the forge's source fields), and the fields still missing (GitLab's whole path and Bitbucket's slug first). */
export function repositoryParts(names: GitSourceFields, fields: Record<string, unknown>): { connectionId: string; repo: GitRepositoryRef; missing: string[] } {
  const field = (k: string) => textField(fields, k);
  const path = names.path ? field(names.path)?.replace(/^\/+|\/+$/g, '') : null;
  const cut = path ? path.lastIndexOf('/') : -1;
  const [id, owner, repository] = [
    field(names.id),
    cut > 0 ? path!.slice(0, cut) : field(names.owner),
    cut > 0 ? path!.slice(cut + 1) : ((names.slug && field(names.slug)) ?? field(names.repository)),
  ];
  const missing = [
    [id, names.id],
    [owner, names.path ?? names.owner],
    [repository, names.repository],
  ]
    .filter(([v]) => !v)
    .map(([, k]) => k!);
  return { connectionId: id ?? '', repo: { owner: owner ?? '', name: repository ?? '' }, missing };
}
