// The connection records as the API answers them (secrets never: their fields answer null), who in
// the organization may use one, the sealed columns of each forge's record, and the address rules a
// connection's URLs follow.
import { badRequest, forbidden, iso, type GitConnectionForm, type GitRepositoryRef, type GitSourceFields, type Role } from '@berth/core';
import type { GitConnectionRow, GitProviderRow } from './entities.ts';
import type { GitProviderView } from './schemas.ts';

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

export const providerView = (r: GitProviderRow): GitProviderView => ({
  gitProviderId: r.gitProviderId,
  name: r.name,
  providerType: r.providerType,
  createdAt: iso(r.createdAt)!,
  organizationId: r.organizationId,
  userId: r.userId,
  sharedWithOrganization: r.sharedWithOrganization,
});

/** A connection's settings as answered: those it has, or, where the forge answers every field of a record (`wire.record`), each setting (null when unset) and each secret field (null). */
export function recordFields(form: GitConnectionForm, settings: GitConnectionRow['settings']): Record<string, unknown> {
  if (!form.wire?.record) return { ...settings };
  const every = Object.keys(form.settings.properties).map(k => [k, settings[k] ?? form.wire?.defaults?.[k] ?? null]);
  return Object.fromEntries([...every, ...Object.keys(form.secrets.properties).map(k => [k, null])]);
}

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
