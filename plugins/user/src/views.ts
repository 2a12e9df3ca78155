// What user.* shows of an account and of a membership, as the peer answers them, and the
// mapping from the kernel's stored records.
import { Type, iso, isPrivileged, MEMBER_SWITCHES, schema, type MemberSwitch, type Static, type User, type Member } from '@berth/core';

const { Nullable, Timestamp: Iso } = schema;

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
  isEnterpriseCloud: Type.Boolean({ description: "not the peer's cloud: false" }),
  sendInvoiceNotifications: Type.Boolean({ description: 'no billing: false' }),
});
export type UserView = Static<typeof UserView>;

/** The peer's per-member grants, as Berth's roles give them: owners and admins may do everything, members read. */
const Grant = (what: string) => Type.Boolean({ description: `${what}: true for owners and admins, false for members` });
const Accessed = (what: string) => Type.Array(Type.String(), { description: `the ${what} a member is limited to in the peer; Berth's members read every one of the organization: empty` });
const memberGrants = {
  teamId: Nullable(Type.String({ description: 'teams are not served: null' })),
  isDefault: Type.Boolean({ description: "whether this organization is the user's default one" }),
  canCreateProjects: Grant('create projects'),
  canAccessToSSHKeys: Grant('manage SSH keys'),
  canCreateServices: Grant('create services'),
  canDeleteProjects: Grant('delete projects'),
  canDeleteServices: Grant('delete services'),
  canAccessToDocker: Grant('use the Docker views'),
  canAccessToAPI: Grant('use the API'),
  canAccessToGitProviders: Grant('manage git providers'),
  canAccessToTraefikFiles: Grant('edit proxy files'),
  canDeleteEnvironments: Grant('delete environments'),
  canCreateEnvironments: Grant('create environments'),
  accessedProjects: Accessed('projects'),
  accessedEnvironments: Accessed('environments'),
  accessedServices: Accessed('services'),
  accessedGitProviders: Accessed('git providers'),
  accessedServers: Accessed('servers'),
};

export const MemberView = Type.Object({
  id: Type.String({ description: 'membership id' }),
  userId: Type.String(),
  organizationId: Type.String(),
  role: Type.String({ description: 'owner, admin, member, or the name of a custom role of the organization (customRole.*)' }),
  createdAt: Iso(),
  ...memberGrants,
  user: UserView,
});
export type MemberView = Static<typeof MemberView>;

type UserRow = InstanceType<typeof User.class>;
type MemberRow = InstanceType<typeof Member.class>;

export const toMemberView = (m: MemberRow, u: UserRow): MemberView => {
  // Owners and admins hold every switch; a member (or a custom role's holder) those given (user.assignPermissions).
  const on = (name: MemberSwitch) => isPrivileged(m.role) || m.switches.includes(name);
  return {
    id: m.id,
    userId: m.userId,
    organizationId: m.organizationId,
    role: m.role,
    createdAt: iso(m.createdAt)!,
    teamId: null,
    isDefault: u.defaultOrganizationId === m.organizationId,
    ...(Object.fromEntries(MEMBER_SWITCHES.map(name => [name, on(name)])) as Record<MemberSwitch, boolean>),
    accessedProjects: m.accessedProjects,
    accessedEnvironments: m.accessedEnvironments,
    accessedServices: m.accessedServices,
    accessedGitProviders: m.accessedGitProviders,
    accessedServers: m.accessedServers,
    user: toUserView(u),
  };
};
const toUserView = (u: UserRow): UserView => ({
  id: u.id,
  email: u.email,
  firstName: u.firstName,
  lastName: u.lastName,
  image: u.image ?? null,
  twoFactorEnabled: u.twoFactorEnabled,
  createdAt: iso(u.createdAt)!,
  updatedAt: iso(u.updatedAt)!,
  allowImpersonation: false,
  stripeCustomerId: null,
  stripeSubscriptionId: null,
  serversQuantity: 0,
  isEnterpriseCloud: false,
  sendInvoiceNotifications: false,
});
