// organization.* — tenants. A caller acts in one organization at a time (its API key's, or
// its session's active one); nothing of another organization is visible. And the peer's
// invitation procedures of user.* (getInvitations, getUserByToken, sendInvitation), on the
// invitations organization.inviteMember makes.
import { Type, newId, notFound, optionalService, router, schema, type NotificationMessage } from '@berth/core';
import { InvitationByToken, InvitationView, OrganizationView, ReceivedInvitation } from './views.ts';

const org = router('organization', 'organization');
const None = Type.Object({});
const OrgId = Type.Object({ organizationId: Type.String({ minLength: 1 }) });

export const organizationProcedures = [
  org.mutation('create', {
    permission: 'member',
    summary: 'A new organization owned by the caller',
    input: Type.Object({ name: schema.Column({ minLength: 1 }), logo: Type.Optional(schema.Column()) }),
    output: OrganizationView,
    handler: ({ name, logo }, ctx) => ctx.cradle.organizations.createOrganization(ctx.principal.userId, name, logo),
  }),
  org.query('all', {
    permission: 'member',
    summary: 'The organizations the caller belongs to',
    input: None,
    output: Type.Array(OrganizationView),
    handler: (_i, ctx) => ctx.cradle.organizations.organizationsOf(ctx.principal.userId),
  }),
  org.query('one', { permission: 'member', input: OrgId, output: OrganizationView, handler: ({ organizationId }, ctx) => ctx.cradle.organizations.organization(ctx.principal.userId, organizationId) }),
  org.query('active', {
    permission: 'member',
    summary: 'The organization this call acts in',
    input: None,
    output: OrganizationView,
    handler: (_i, ctx) => ctx.cradle.organizations.organization(ctx.principal.userId, ctx.principal.organizationId),
  }),
  org.mutation('update', {
    permission: 'member',
    input: Type.Object({ organizationId: Type.String({ minLength: 1 }), name: schema.Column({ minLength: 1 }), logo: Type.Optional(schema.Column()) }),
    output: OrganizationView,
    handler: ({ organizationId, name, logo }, ctx) => ctx.cradle.organizations.updateOrganization(ctx.principal, organizationId, { name, logo }),
  }),
  org.mutation('delete', {
    permission: 'member',
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
    permission: 'member',
    summary: "Make an organization the caller's default (and this session's active one); answers {success: true}, as the peer does",
    input: OrgId,
    output: Type.Object({ success: Type.Boolean() }),
    async handler({ organizationId }, ctx) {
      await ctx.cradle.organizations.setDefaultOrganization(ctx.principal, organizationId);
      return { success: true };
    },
  }),
  org.mutation('inviteMember', {
    permission: 'member.create',
    summary: 'Invite someone; they accept with auth.createUser {id, token, password}',
    input: Type.Object({ email: schema.Email(), role: Type.Enum(['admin', 'member']) }),
    output: Type.Intersect([InvitationView, Type.Object({ token: Type.String({ description: 'shown once' }) })]),
    handler: ({ email, role }, ctx) => ctx.cradle.organizations.invite(ctx.principal, email, role),
  }),
  org.query('allInvitations', {
    permission: 'member.create',
    input: None,
    output: Type.Array(InvitationView),
    handler: (_i, ctx) => ctx.cradle.organizations.invitations(ctx.principal.organizationId),
  }),
  org.mutation('removeInvitation', {
    permission: 'member.create',
    input: Type.Object({ invitationId: Type.String() }),
    output: Type.Boolean(),
    async handler({ invitationId }, ctx) {
      await ctx.cradle.organizations.cancelInvitation(ctx.principal.organizationId, invitationId);
      return true;
    },
  }),
  org.mutation('updateMemberRole', {
    permission: 'member.update',
    summary: "Change a member's role (by membership id or user id); answers true, as the peer does",
    input: Type.Object({ memberId: Type.String(), role: Type.String({ minLength: 1, maxLength: 50, description: 'admin, member, or a custom role of the organization (customRole.*)' }) }),
    output: schema.Ok(),
    async handler({ memberId, role }, ctx) {
      await ctx.cradle.users.setRole(memberId, ctx.principal.organizationId, role);
      return true;
    },
  }),
];

/**
 * The invitation e-mail: for whom, until when, and how to accept. Berth serves no page at the
 * link (it has no web UI): the link is the peer's, for its clients, and the mail says the call.
 */
const invitationMail = (organization: string, invitation: InvitationView, base: string, token: string, link: string): NotificationMessage => ({
  id: `invitation_${newId(16)}`,
  event: 'invitation',
  level: 'info',
  title: `You are invited to join ${organization} on Berth`,
  fields: [
    { name: 'Organization', value: organization },
    { name: 'Role', value: invitation.role },
    { name: 'Expires', value: invitation.expiresAt },
    { name: 'Accept', value: `POST ${base}/api/auth.createUser with {"id": "${invitation.id}", "token": "${token}", "password": "<a new password, or your account's if you have one>"}` },
  ],
  link,
  at: new Date().toISOString(),
  data: {},
});

/** The peer's invitation procedures of user.*, on Berth's organization invitations. */
const user = router('user', 'organization');
export const invitationProcedures = [
  user.query('getInvitations', {
    permission: 'member',
    summary: "The pending invitations addressed to the caller's e-mail, in every organization, each with its organization",
    input: Type.Object({}),
    output: Type.Array(ReceivedInvitation),
    handler: async (_i, ctx) => ctx.cradle.organizations.invitationsTo((await ctx.cradle.users.member(ctx.principal.userId, ctx.principal.organizationId)).user.email),
  }),
  user.query('getUserByToken', {
    scope: 'public',
    summary: 'The invitation a token belongs to (the token its link carries), for whoever holds it: its e-mail, role and status, whether it expired and whether that e-mail has an account',
    input: Type.Object({ token: schema.NonEmpty({ maxLength: 255, description: "the invitation's token: organization.inviteMember answers it, and user.sendInvitation's link carries it" }) }),
    output: InvitationByToken,
    handler: ({ token }, ctx) => ctx.cradle.organizations.invitationByToken(token),
  }),
  user.mutation('sendInvitation', {
    permission: 'member.create',
    summary:
      "Mail a pending invitation through one of the organization's channels that mail (email, resend) to the invited address; answers the link, which carries a new token (the one answered before stops working)",
    input: Type.Object({ invitationId: schema.NonEmpty({ maxLength: 64 }), notificationId: schema.NonEmpty({ maxLength: 64 }) }),
    output: Type.String({ description: "the invitation's link: <Berth's address>/invitation?token=<token>" }),
    async handler({ invitationId, notificationId }, ctx) {
      const { organizations, config, principal } = ctx.cradle;
      const organizationId = principal!.organizationId;
      const invitation = await organizations.pendingInvitation(organizationId, invitationId);
      // Without the notification plugin there is no channel to name: the peer's answer for an unknown one.
      const notifications = optionalService(ctx.cradle, 'notificationService');
      if (!notifications) throw notFound('Notification');
      const { name } = await organizations.organization(principal!.userId, organizationId);
      const base = (config.publicUrl ?? ctx.origin).replace(/\/+$/, '');
      return organizations.reissue(organizationId, invitationId, async token => {
        const link = `${base}/invitation?token=${encodeURIComponent(token)}`;
        await notifications.mail(notificationId, invitationMail(name, invitation, base, token, link), [invitation.email]);
        return link;
      });
    },
  }),
];
