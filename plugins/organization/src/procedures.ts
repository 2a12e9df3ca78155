// organization.* — tenants. A caller acts in one organization at a time (its API key's, or
// its session's active one); nothing of another organization is visible.
import { Type, router, schema } from '@berth/core';
import { InvitationView, OrganizationView } from './views.ts';

const org = router('organization', 'organization');
const None = Type.Object({});
const OrgId = Type.Object({ organizationId: Type.String({ minLength: 1 }) });

export const organizationProcedures = [
  org.mutation('create', {
    summary: 'A new organization owned by the caller',
    input: Type.Object({ name: schema.Column({ minLength: 1 }), logo: Type.Optional(schema.Column()) }),
    output: OrganizationView,
    handler: ({ name, logo }, ctx) => ctx.cradle.organizations.createOrganization(ctx.principal.userId, name, logo),
  }),
  org.query('all', {
    summary: 'The organizations the caller belongs to',
    input: None,
    output: Type.Array(OrganizationView),
    handler: (_i, ctx) => ctx.cradle.organizations.organizationsOf(ctx.principal.userId),
  }),
  org.query('one', { input: OrgId, output: OrganizationView, handler: ({ organizationId }, ctx) => ctx.cradle.organizations.organization(ctx.principal.userId, organizationId) }),
  org.query('active', {
    summary: 'The organization this call acts in',
    input: None,
    output: OrganizationView,
    handler: (_i, ctx) => ctx.cradle.organizations.organization(ctx.principal.userId, ctx.principal.organizationId),
  }),
  org.mutation('update', {
    input: Type.Object({ organizationId: Type.String({ minLength: 1 }), name: schema.Column({ minLength: 1 }), logo: Type.Optional(schema.Column()) }),
    output: OrganizationView,
    handler: ({ organizationId, name, logo }, ctx) => ctx.cradle.organizations.updateOrganization(ctx.principal, organizationId, { name, logo }),
  }),
  org.mutation('delete', {
    summary: 'Delete an organization the caller owns, with every record in it; answers it as it was',
    input: OrgId,
    output: OrganizationView,
    async handler({ organizationId }, ctx) {
      const { organizations } = ctx.cradle;
      const removed = await organizations.organization(ctx.principal.userId, organizationId);
      await organizations.deleteOrganization(ctx.principal, organizationId);
      return removed;
    },
  }),
  org.mutation('setDefault', {
    summary: "Make an organization the caller's default (and this session's active one); answers {success: true}, as the peer does",
    input: OrgId,
    output: Type.Object({ success: Type.Boolean() }),
    async handler({ organizationId }, ctx) {
      await ctx.cradle.organizations.setDefaultOrganization(ctx.principal, organizationId);
      return { success: true };
    },
  }),
  org.mutation('inviteMember', {
    access: 'admin',
    summary: 'Invite someone; they accept with auth.createUser {id, token, password}',
    input: Type.Object({ email: schema.Email(), role: Type.Enum(['admin', 'member']) }),
    output: Type.Intersect([InvitationView, Type.Object({ token: Type.String({ description: 'shown once' }) })]),
    handler: ({ email, role }, ctx) => ctx.cradle.organizations.invite(ctx.principal, email, role),
  }),
  org.query('allInvitations', { access: 'admin', input: None, output: Type.Array(InvitationView), handler: (_i, ctx) => ctx.cradle.organizations.invitations(ctx.principal.organizationId) }),
  org.mutation('removeInvitation', {
    access: 'admin',
    input: Type.Object({ invitationId: Type.String() }),
    output: Type.Boolean(),
    async handler({ invitationId }, ctx) {
      await ctx.cradle.organizations.cancelInvitation(ctx.principal.organizationId, invitationId);
      return true;
    },
  }),
  org.mutation('updateMemberRole', {
    access: 'admin',
    summary: "Change a member's role (by membership id or user id); answers true, as the peer does",
    input: Type.Object({ memberId: Type.String(), role: Type.Enum(['admin', 'member']) }),
    output: schema.Ok(),
    async handler({ memberId, role }, ctx) {
      await ctx.cradle.users.setRole(memberId, ctx.principal.organizationId, role);
      return true;
    },
  }),
];
