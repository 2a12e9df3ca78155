// What the API shows of identity records: one TypeBox schema each, shared by the auth,
// user and organization plugins, with the mapping from the stored entity.
import Type, { type Static } from 'typebox';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const Iso = () => Type.String({ format: 'date-time' });

export const UserView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  firstName: Type.String(),
  lastName: Type.String(),
  image: Nullable(Type.String()),
  twoFactorEnabled: Type.Boolean(),
  createdAt: Iso(),
  updatedAt: Iso(),
  // The peer's billing and cloud fields of an account: Berth has none of these features.
  allowImpersonation: Type.Boolean({ description: 'impersonation is not served: false' }),
  stripeCustomerId: Nullable(Type.String({ description: 'no billing: null' })),
  stripeSubscriptionId: Nullable(Type.String({ description: 'no billing: null' })),
  serversQuantity: Type.Integer({ description: 'no billing: 0' }),
  isEnterpriseCloud: Type.Boolean({ description: 'not the peer\'s cloud: false' }),
  sendInvoiceNotifications: Type.Boolean({ description: 'no billing: false' }),
});
export type UserView = Static<typeof UserView>;

/** The peer's per-member grants, as Berth's roles give them: owners and admins may do everything, members read. */
const Grant = (what: string) => Type.Boolean({ description: `${what}: true for owners and admins, false for members` });
const Accessed = (what: string) => Type.Array(Type.String(), { description: `the ${what} a member is limited to in the peer; Berth's members read every one of the organization: empty` });
export const memberGrants = {
  teamId: Nullable(Type.String({ description: 'teams are not served: null' })),
  isDefault: Type.Boolean({ description: 'whether this organization is the user\'s default one' }),
  canCreateProjects: Grant('create projects'), canAccessToSSHKeys: Grant('manage SSH keys'), canCreateServices: Grant('create services'),
  canDeleteProjects: Grant('delete projects'), canDeleteServices: Grant('delete services'), canAccessToDocker: Grant('use the Docker views'),
  canAccessToAPI: Grant('use the API'), canAccessToGitProviders: Grant('manage git providers'), canAccessToTraefikFiles: Grant('edit proxy files'),
  canDeleteEnvironments: Grant('delete environments'), canCreateEnvironments: Grant('create environments'),
  accessedProjects: Accessed('projects'), accessedEnvironments: Accessed('environments'), accessedServices: Accessed('services'),
  accessedGitProviders: Accessed('git providers'), accessedServers: Accessed('servers'),
};

export const MemberView = Type.Object({
  id: Type.String({ description: 'membership id' }),
  userId: Type.String(),
  organizationId: Type.String(),
  role: Type.Enum(['owner', 'admin', 'member']),
  createdAt: Iso(),
  ...memberGrants,
  user: UserView,
});
export type MemberView = Static<typeof MemberView>;

/** The older variant's account record ("auth"): role as `rol`, `admin | user`. */
export const AuthUserView = Type.Object({
  id: Type.String(),
  userId: Type.String(),
  email: Type.String(),
  rol: Type.Enum(['admin', 'user']),
  image: Nullable(Type.String()),
  secret: Type.Null({ description: 'never disclosed' }),
  token: Type.Null({ description: 'never disclosed' }),
  is2FAEnabled: Type.Boolean(),
  organizationId: Nullable(Type.String()),
  createdAt: Iso(),
});
export type AuthUserView = Static<typeof AuthUserView>;

export const OrganizationView = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  name: Type.String(),
  slug: Nullable(Type.String()),
  logo: Nullable(Type.String()),
  ownerId: Type.String(),
  createdAt: Iso(),
  metadata: Nullable(Type.String({ description: 'the peer\'s free-form metadata (not kept: null)' })),
  defaultRole: Nullable(Type.String({ description: 'the peer\'s default role of new members (not kept: null)' })),
});
export type OrganizationView = Static<typeof OrganizationView>;

export const ApiKeyView = Type.Object({
  id: Type.String(),
  apiKeyId: Type.String(),
  name: Type.String(),
  prefix: Nullable(Type.String()),
  start: Type.String(),
  userId: Type.String(),
  organizationId: Type.String(),
  metadata: Nullable(Type.Record(Type.String(), Type.Unknown())),
  expiresAt: Nullable(Iso()),
  lastUsedAt: Nullable(Iso()),
  createdAt: Iso(),
});
export type ApiKeyView = Static<typeof ApiKeyView>;

export const InvitationView = Type.Object({
  id: Type.String(),
  invitationId: Type.String(),
  organizationId: Type.String(),
  email: Type.String(),
  role: Type.Enum(['admin', 'member']),
  status: Type.Enum(['pending', 'accepted', 'canceled']),
  expiresAt: Iso(),
  createdAt: Iso(),
});
export type InvitationView = Static<typeof InvitationView>;

export const iso = (d: Date | string | null | undefined): string | null =>
  d == null ? null : (d instanceof Date ? d.toISOString() : new Date(d).toISOString());
