// The transport's permission checks: the permission a procedure declares against the caller's
// grants (before the input is read), then the records the input names against the records the
// caller was given (once the input is judged). Handlers never test permissions themselves.
import { forbidden, notFound } from '../errors.ts';
import { allows, reaches, SERVICE_ID_FIELDS, type RecordKind } from '../permissions.ts';
import type { Principal, Procedure } from '../procedure.ts';

/** FORBIDDEN unless the caller's role, custom role or switches give what the procedure declares. */
export function assertPermitted(proc: Procedure, principal: Principal): void {
  if (proc.permission === 'member' || allows(principal.grants, proc.permission)) return;
  throw forbidden(
    `${proc.path} needs the permission ${proc.permission}, which your role (${principal.grants.roleName}) does not give: an owner or admin can grant it (user.assignPermissions, customRole.*)`,
  );
}

/**
 * The input fields that name a record a member is given one by one (user.assignPermissions'
 * accessedProjects, accessedEnvironments, accessedServices, accessedGitProviders): the field name
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
};

/**
 * NOT_FOUND when the input names a record the caller was not given — as a record of another
 * organization is, so a member cannot tell the two apart. Owners, admins and members given every
 * record pass.
 */
export function assertReaches(principal: Principal, input: unknown): void {
  if (principal.grants.records === null || typeof input !== 'object' || input === null) return;
  for (const [field, kind] of Object.entries(RECORD_FIELDS)) {
    const id = (input as Record<string, unknown>)[field];
    if (typeof id === 'string' && id !== '' && !reaches(principal.grants, kind, id)) throw notFound(RECORD_NAMES[kind]);
  }
}

const RECORD_NAMES: Readonly<Record<RecordKind, string>> = { projects: 'Project', environments: 'Environment', services: 'Service', gitProviders: 'Git provider', servers: 'Server' };
