// The connection records as the API answers them (secrets never: their fields answer null), who in
// the organization may use one, the sealed columns of each forge's record, and the address rules a
// connection's URLs follow.
import { badRequest, forbidden, iso, schema, Type, type GitConnectionForm, type GitProvider, type GitRepositoryRef, type GitSourceFields, type Role, type TSchema } from '@berth/core';
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

/** The input field that names a connection of a forge (and the workload field that holds it): its sourceFields.id, else `<forge>Id`. */
export const forgeIdField = (provider: GitProvider): string => provider.sourceFields?.id ?? `${provider.id}Id`;

/** A connection's record as its forge's answers carry it (without the git provider row): its id, git provider id and settings, in clear. */
export const connectionRecord = (provider: GitProvider, record: GitConnectionRow): Record<string, unknown> => ({
  [forgeIdField(provider)]: record.connectionId,
  ...recordFields(provider.connection!, record.settings),
  gitProviderId: record.gitProviderId,
});

/** The fields of a record a workload's `one` does not join: the secrets and what the forge's wire leaves out. */
const unjoined = (form: GitConnectionForm) => new Set([...Object.keys(form.secrets.properties), ...(form.wire?.unjoined ?? [])]);

/** A connection as a workload's `one` joins it: its record without the secret fields (and those the wire leaves out). */
export const connectionRelation = (provider: GitProvider, record: GitConnectionRow): Record<string, unknown> => {
  const left = unjoined(provider.connection!);
  return Object.fromEntries(Object.entries(connectionRecord(provider, record)).filter(([k]) => !left.has(k)));
};

const { Nullable } = schema;
/** Each property of an object schema made optional (a stored connection answers the settings it has). */
const optional = (properties: Record<string, TSchema>) => Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)]));
/** Each property of an object schema answered or null (a record of the peer's answers every field). */
const nullable = (properties: Record<string, TSchema>) => Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Nullable(v)]));
/** A secret field as a record answers it: a string in the peer's type, always null in Berth's answers. */
const sealed = (properties: Record<string, TSchema>) => Object.fromEntries(Object.keys(properties).map(k => [k, Nullable(Type.String({ description: 'sealed in Berth: always null' }))]));

/** The schema of connectionRecord: where the forge answers every field, a setting with a default is always answered and the others may be null. */
export function connectionRecordSchema(provider: GitProvider) {
  const form = provider.connection!;
  const defaulted = Object.keys(form.wire?.defaults ?? {});
  const every = { ...nullable(form.settings.properties), ...Object.fromEntries(defaulted.map(k => [k, form.settings.properties[k]!])) };
  const settings = form.wire?.record ? { ...every, ...sealed(form.secrets.properties) } : optional(form.settings.properties);
  return Type.Object({ [forgeIdField(provider)]: Type.String(), ...settings, gitProviderId: Type.String() });
}

/** The schema of connectionRelation. */
export function connectionRelationSchema(provider: GitProvider) {
  const left = unjoined(provider.connection!);
  return Type.Object(Object.fromEntries(Object.entries(connectionRecordSchema(provider).properties).filter(([k]) => !left.has(k))));
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
