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
