// What a member may do inside their organization: the peer's resources and actions (its
// `customRole.getStatements`), the three built-in roles, custom roles and the member's own grants.
// Each procedure declares the one permission it needs (`permission: 'service.read'`), or `member`
// for what every member may call; the transport checks it before the handler runs. A permission
// refines the procedure's scope (docs/security.md); it never widens it: an instance-scoped
// procedure still needs an instance operator.

/** Every resource and its actions, as the peer's access control lists them. */
export const statements = {
  organization: ['update', 'delete'],
  member: ['read', 'create', 'update', 'delete'],
  invitation: ['create', 'cancel'],
  team: ['create', 'update', 'delete'],
  ac: ['create', 'read', 'update', 'delete'],
  project: ['create', 'delete'],
  service: ['create', 'read', 'delete'],
  environment: ['create', 'read', 'delete'],
  docker: ['read'],
  sshKeys: ['read', 'create', 'delete'],
  gitProviders: ['read', 'create', 'delete'],
  traefikFiles: ['read', 'write'],
  api: ['read'],
  volume: ['read', 'create', 'delete'],
  deployment: ['read', 'create', 'cancel'],
  envVars: ['read', 'write'],
  projectEnvVars: ['read', 'write'],
  environmentEnvVars: ['read', 'write'],
  server: ['read', 'create', 'delete'],
  registry: ['read', 'create', 'delete'],
  certificate: ['read', 'create', 'update', 'delete'],
  backup: ['read', 'create', 'update', 'delete', 'restore'],
  volumeBackup: ['read', 'create', 'update', 'delete', 'restore'],
  schedule: ['read', 'create', 'update', 'delete'],
  domain: ['read', 'create', 'delete'],
  destination: ['read', 'create', 'delete'],
  notification: ['read', 'create', 'update', 'delete'],
  tag: ['read', 'create', 'update', 'delete'],
  logs: ['read'],
  monitoring: ['read'],
  auditLog: ['read'],
  vaultProvider: ['read', 'create', 'update', 'delete'],
  dnsProvider: ['read', 'create', 'update', 'delete'],
} as const;

export type Statements = typeof statements;
export type Resource = keyof Statements;
/** `<resource>.<action>`, e.g. `service.read`. */
export type Permission = { [R in Resource]: `${R}.${Statements[R][number]}` }[Resource];
/**
 * What a procedure needs of a signed-in member: a permission, or `member` — any member of the
 * organization (reading one's own account, the organization's list, the version…): the procedures
 * that declare it are listed, with why, in test/governance.test.ts.
 */
export type Need = Permission | 'member';

/** A set of permissions: resource → its granted actions. */
export type Statement = Partial<Record<Resource, readonly string[]>>;

const everything = statements as Statement;

/** The built-in roles, as the peer's: owner and admin may do everything (admin: not delete the organization). */
export const builtInRoles: Readonly<Record<'owner' | 'admin' | 'member', Statement>> = {
  owner: everything,
  admin: { ...everything, organization: ['update'] },
  // The peer's member: reads the projects, environments and services it was given, and acts on
  // everything inside those services (deployments, variables, domains, backups, logs…), nothing of the organization's.
  member: {
    ac: ['read'],
    service: ['read'],
    environment: ['read'],
    volume: ['read', 'create', 'delete'],
    deployment: ['read', 'create', 'cancel'],
    envVars: ['read', 'write'],
    projectEnvVars: ['read', 'write'],
    environmentEnvVars: ['read', 'write'],
    backup: ['read', 'create', 'update', 'delete', 'restore'],
    volumeBackup: ['read', 'create', 'update', 'delete', 'restore'],
    schedule: ['read', 'create', 'update', 'delete'],
    domain: ['read', 'create', 'delete'],
    logs: ['read'],
    monitoring: ['read'],
    tag: ['read'],
    vaultProvider: ['read'],
  },
};

/**
 * What a member given every record (`allRecords`: the members from before roles, or given it by
 * user.assignPermissions) may do: what members could before roles — everything inside the
 * organization's services (settings, deployments, variables, domains, backups, volumes, schedules,
 * logs, the engine's views) and reading its servers, registries, notifications and certificates —
 * and none of what only owners and admins could (deleting a service, making servers, connections,
 * keys or destinations, the proxy's files). Switches add to it.
 */
export const MEMBER_BEFORE_ROLES: Statement = {
  ...builtInRoles.member,
  service: ['create', 'read'],
  docker: ['read'],
  server: ['read'],
  registry: ['read'],
  notification: ['read'],
  certificate: ['read'],
  sshKeys: ['read'],
  member: ['read'],
  projectEnvVars: ['read', 'write'],
  environmentEnvVars: ['read', 'write'],
};

/** The peer's per-member switches (user.assignPermissions), each granting what it names. */
export const memberSwitches = {
  canCreateProjects: ['project.create'],
  canDeleteProjects: ['project.delete'],
  canCreateServices: ['service.create'],
  canDeleteServices: ['service.delete'],
  canCreateEnvironments: ['environment.create'],
  canDeleteEnvironments: ['environment.delete'],
  canAccessToTraefikFiles: ['traefikFiles.read', 'traefikFiles.write'],
  canAccessToDocker: ['docker.read'],
  canAccessToAPI: ['api.read'],
  canAccessToSSHKeys: ['sshKeys.read', 'sshKeys.create', 'sshKeys.delete'],
  canAccessToGitProviders: ['gitProviders.read', 'gitProviders.create', 'gitProviders.delete'],
} as const satisfies Record<string, readonly Permission[]>;
export type MemberSwitch = keyof typeof memberSwitches;
export const MEMBER_SWITCHES = Object.keys(memberSwitches) as MemberSwitch[];

/** The records a member was given: ids of projects, environments, services, git connections, servers. */
export interface RecordAccess {
  projects: readonly string[];
  environments: readonly string[];
  services: readonly string[];
  gitProviders: readonly string[];
  servers: readonly string[];
}
export type RecordKind = keyof RecordAccess;

/** What decides a member's calls: their role, its statement, their switches and records. */
export interface Grants {
  /** The role's name: owner, admin, member or a custom role of the organization. */
  readonly roleName: string;
  /** The role's statement (a custom role's as stored; an unknown role's: nothing). */
  readonly statement: Statement;
  /** The switches that are on (members only: owners and admins have everything already). */
  readonly switches: ReadonlySet<MemberSwitch>;
  /** The records given; null: every record of the organization (owners, admins, and members from before roles). */
  readonly records: RecordAccess | null;
}

/** True when the role is owner or admin: every permission, every record. */
export const isPrivileged = (roleName: string) => roleName === 'owner' || roleName === 'admin';

/** Whether `grants` allow `permission`. */
export function allows(grants: Grants, permission: Permission): boolean {
  const [resource, action] = permission.split('.') as [Resource, string];
  if (grants.statement[resource]?.includes(action)) return true;
  for (const name of grants.switches) if ((memberSwitches[name] as readonly string[]).includes(permission)) return true;
  return false;
}

/** Every resource and action with whether `grants` allow it: user.getPermissions' answer. */
export function resolvePermissions(grants: Grants): Record<Resource, Record<string, boolean>> {
  const out = {} as Record<Resource, Record<string, boolean>>;
  for (const [resource, actions] of Object.entries(statements) as [Resource, readonly string[]][])
    out[resource] = Object.fromEntries(actions.map(action => [action, allows(grants, `${resource}.${action}` as Permission)]));
  return out;
}

/** The id fields of the services (workloads) a member is given one by one: the peer's names. */
export const SERVICE_ID_FIELDS = ['applicationId', 'composeId', 'postgresId', 'mysqlId', 'mariadbId', 'mongoId', 'redisId', 'libsqlId'] as const;

/**
 * An environment as a member given records sees it: its lists of services keep those it was given
 * (an item is a service when it carries one of SERVICE_ID_FIELDS).
 */
export function narrowEnvironment<E extends Record<string, unknown>>(grants: Grants, environment: E): E {
  if (grants.records === null) return environment;
  const services = grants.records.services;
  const given = (item: unknown) => {
    const field = SERVICE_ID_FIELDS.find(f => typeof (item as Record<string, unknown>)?.[f] === 'string');
    return !field || services.includes((item as Record<string, string>)[field]!);
  };
  return Object.fromEntries(Object.entries(environment).map(([k, v]) => [k, Array.isArray(v) ? v.filter(given) : v])) as E;
}

/** Whether a member may reach the record of `kind` with this id (null records: every one). */
export function reaches(grants: Grants, kind: RecordKind, id: string): boolean {
  return grants.records === null || grants.records[kind].includes(id);
}

/**
 * The permission named, checked against the statements: a programming error (a typo in a plain
 * JavaScript plugin) stops the boot rather than refusing every call.
 */
export function isNeed(value: unknown): value is Need {
  if (value === 'member') return true;
  if (typeof value !== 'string') return false;
  const [resource, action, extra] = value.split('.');
  return extra === undefined && (statements as Record<string, readonly string[]>)[resource!]?.includes(action!) === true;
}

/**
 * A custom role's statement as given (customRole.create/update): every resource and action must be
 * one of the statements; the error names the first that is not.
 */
export function statementIssue(permissions: Record<string, unknown>): string | null {
  for (const [resource, actions] of Object.entries(permissions)) {
    const known = (statements as Record<string, readonly string[]>)[resource];
    if (!known) return `permissions.${resource}: no such resource`;
    if (!Array.isArray(actions)) return `permissions.${resource}: a list of actions`;
    for (const action of actions) if (typeof action !== 'string' || !known.includes(action)) return `permissions.${resource}: no action ${JSON.stringify(action)} (${known.join(', ')})`;
  }
  return null;
}
