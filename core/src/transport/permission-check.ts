// The transport's permission checks: the permission a procedure declares against the caller's
// grants (before the input is read), then the records the input names — directly, or through the
// record a sub-record belongs to — against the records the caller was given (once the input is
// judged). Handlers never test permissions themselves.
import type { EntityManager } from '@mikro-orm/postgresql';
import { forbidden, notFound } from '../errors.ts';
import { allows, reaches, SERVICE_ID_FIELDS, type RecordKind } from '../permissions.ts';
import type { Principal, Procedure } from '../procedure.ts';
import type { OwnerLookup, RecordOwner, RecordRef } from '../record-owners.ts';

/** FORBIDDEN unless the caller's role, custom role or switches give what the procedure declares. */
export function assertPermitted(proc: Procedure, principal: Principal): void {
  if (proc.permission === 'member' || allows(principal.grants, proc.permission)) return;
  throw forbidden(
    `${proc.path} needs the permission ${proc.permission}, which your role (${principal.grants.roleName}) does not give: an owner or admin can grant it (user.assignPermissions, customRole.*)`,
  );
}

/**
 * The input fields that name a record a member is given one by one (user.assignPermissions'
 * accessedProjects, accessedEnvironments, accessedServices, accessedGitProviders, accessedServers): the field name
 * is the peer's, the same on every procedure.
 */
const RECORD_FIELDS: Readonly<Record<string, RecordKind>> = {
  projectId: 'projects',
  environmentId: 'environments',
  ...Object.fromEntries(SERVICE_ID_FIELDS.map(field => [field, 'services' as const])),
  gitProviderId: 'gitProviders',
  githubId: 'gitProviders',
  gitlabId: 'gitProviders',
  bitbucketId: 'gitProviders',
  giteaId: 'gitProviders',
  // The peer checks a workload's server and build server against accessedServers (getAccessibleServerIds).
  serverId: 'servers',
  buildServerId: 'servers',
};

/**
 * The input fields that name a sub-record (domainId, mountId, deploymentId…) and how to find the
 * record it belongs to, as the plugins declare them (`berth.recordOwners`). Like RECORD_FIELDS, a
 * field means the same on every procedure.
 */
export type RecordOwners = Map<string, RecordOwner>;

export function addRecordOwners(owners: RecordOwners, added: Readonly<Record<string, RecordOwner>>): void {
  for (const [field, owner] of Object.entries(added)) {
    if (field in RECORD_FIELDS || owners.has(field)) throw new Error(`recordOwners: ${field} is checked already (a record given one by one, or an owner declared before)`);
    owners.set(field, owner);
  }
}

/** The owner of the record `field` names: itself for a record given one by one, the declared lookup's answer for a sub-record, none for another field. */
async function ownerOf(owners: RecordOwners, field: string, id: string, lookup: Omit<OwnerLookup, 'ownerOf'>): Promise<RecordRef | null> {
  const kind = RECORD_FIELDS[field];
  if (kind) return { kind, id };
  return (await owners.get(field)?.owner(id, { ...lookup, ownerOf: (f, i) => ownerOf(owners, f, i, lookup) })) ?? null;
}

/**
 * NOT_FOUND when the input names a record the caller was not given, or a sub-record of one — as a
 * record of another organization is, so a member cannot tell the two apart. Owners, admins and
 * members given every record pass without a lookup; a sub-record's owner is looked up (`em`: an
 * entity manager of the check's own) only for a member given records one by one.
 */
export async function assertReaches(principal: Principal, input: unknown, owners: RecordOwners, em: () => EntityManager): Promise<void> {
  if (principal.grants.records === null || typeof input !== 'object' || input === null) return;
  const fields = { ...(input as Record<string, unknown>), ...typedId(input as Record<string, unknown>) };
  for (const [field, kind] of Object.entries(RECORD_FIELDS)) {
    const id = fields[field];
    if (typeof id === 'string' && id !== '' && !reaches(principal.grants, kind, id)) throw notFound(RECORD_NAMES[kind]);
  }
  let lookup: Omit<OwnerLookup, 'ownerOf'> | undefined;
  for (const [field, { what }] of owners) {
    const id = fields[field];
    if (typeof id !== 'string' || id === '') continue;
    lookup ??= { organizationId: principal.organizationId, em: em() };
    const owner = await ownerOf(owners, field, id, lookup);
    if (owner && !reaches(principal.grants, owner.kind, owner.id)) throw notFound(what);
  }
}

/**
 * The fields beside a generic `id` that say what it names, in the peer's procedures that take one
 * (deployment.allByType's `type`, schedule.list's `scheduleType`, volumeBackups.list's
 * `volumeBackupType`, patch.*'s `type`).
 */
const ID_TYPE_FIELDS = ['type', 'scheduleType', 'volumeBackupType'] as const;

/**
 * A generic `id` as the field its type names (`{ id, type: '<kind>' }` → `<kind>Id`, a workload's;
 * `{ id, type: 'backup' }` → `backupId`), so it is checked as that field is; nothing when the input
 * has no such pair or already names that field itself.
 */
function typedId(fields: Record<string, unknown>): Record<string, string> {
  const id = fields.id;
  if (typeof id !== 'string' || id === '') return {};
  for (const typeField of ID_TYPE_FIELDS) {
    const type = fields[typeField];
    if (typeof type === 'string' && /^[a-z][A-Za-z]{0,40}$/.test(type) && fields[`${type}Id`] === undefined) return { [`${type}Id`]: id };
  }
  return {};
}

const RECORD_NAMES: Readonly<Record<RecordKind, string>> = { projects: 'Project', environments: 'Environment', services: 'Service', gitProviders: 'Git provider', servers: 'Server' };
