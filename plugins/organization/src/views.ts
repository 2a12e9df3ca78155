// What organization.* shows of an organization and of an invitation, as the peer answers them,
// and the mapping from the kernel's stored records.
import { Type, iso, schema, type Static, type Invitation, type Organization } from '@berth/core';

const { Nullable, Timestamp: Iso } = schema;

export const OrganizationView = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  name: Type.String(),
  slug: Nullable(Type.String()),
  logo: Nullable(Type.String()),
  ownerId: Type.String(),
  createdAt: Iso(),
  metadata: Nullable(Type.String({ description: "the peer's free-form metadata (not kept: null)" })),
  defaultRole: Nullable(Type.String({ description: "the peer's default role of new members (not kept: null)" })),
});
export type OrganizationView = Static<typeof OrganizationView>;

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

/** An invitation addressed to the caller, as user.getInvitations answers it: the peer's row with its organization. */
export const ReceivedInvitation = Type.Object({
  ...InvitationView.properties,
  inviterId: Type.String({ description: 'the member who invited' }),
  teamId: Nullable(Type.String({ description: 'teams are not served: null' })),
  organization: OrganizationView,
});
export type ReceivedInvitation = Static<typeof ReceivedInvitation>;

/** An invitation as its token shows it to whoever holds the token (user.getUserByToken), as the peer answers it. */
export const InvitationByToken = Type.Object({
  id: Type.String({ description: 'the invitation: auth.createUser takes it as id, with this token' }),
  email: Type.String(),
  status: InvitationView.properties.status,
  role: InvitationView.properties.role,
  inviterId: Type.String(),
  isExpired: Type.Boolean(),
  userAlreadyExists: Type.Boolean({ description: 'an account with this e-mail exists: accept with its password' }),
});
export type InvitationByToken = Static<typeof InvitationByToken>;

export const toOrganizationView = (o: InstanceType<typeof Organization.class>): OrganizationView => ({
  id: o.id,
  organizationId: o.id,
  name: o.name,
  slug: o.slug ?? null,
  logo: o.logo ?? null,
  ownerId: o.ownerId,
  createdAt: iso(o.createdAt)!,
  metadata: null,
  defaultRole: null,
});
export const toInvitationView = (i: InstanceType<typeof Invitation.class>): InvitationView => ({
  id: i.id,
  invitationId: i.id,
  organizationId: i.organizationId,
  email: i.email,
  role: i.role,
  status: i.status,
  expiresAt: iso(i.expiresAt)!,
  createdAt: iso(i.createdAt)!,
});
