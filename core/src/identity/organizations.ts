// Organizations (the tenants) and the invitations that bring people into them. Invitation
// tokens are stored as hashes, shown once.
import type { EntityManager } from '@mikro-orm/postgresql';
import { forbidden, notFound, unauthorized } from '../errors.ts';
import { hashToken, newId, newToken, verifyPassword } from '../crypto.ts';
import type { Principal } from '../procedure.ts';
import { Invitation, Member, Organization, Session, User } from './entities.ts';
import { iso, type InvitationView, type OrganizationView } from './views.ts';
import { DAY, IdentityStore, newUser } from './shared.ts';
import type { SignedIn } from './sessions.ts';

/** Runs before an organization's rows are deleted, in the unit of work that deletes them: plugins remove what the organization has on the hosts. */
export type OrganizationRemover = (organizationId: string, em: EntityManager) => Promise<void>;

export class OrganizationService extends IdentityStore<'sessions'> {
  readonly #removers: OrganizationRemover[] = [];

  /** Adds what must happen before an organization is deleted (its rows cascade through foreign keys; its engine objects do not). */
  beforeRemove(remover: OrganizationRemover): void {
    this.#removers.push(remover);
  }

  /** The organizations a user belongs to, oldest first. */
  async organizationsOf(userId: string): Promise<OrganizationView[]> {
    const em = this.em();
    const members = await em.find(Member, { userId });
    const orgs = await em.find(Organization, { id: { $in: members.map(m => m.organizationId) } }, { orderBy: { createdAt: 'asc' } });
    return orgs.map(toOrganizationView);
  }

  /** One organization of a user; NOT_FOUND when it does not belong to it. */
  async organization(userId: string, organizationId: string): Promise<OrganizationView> {
    const em = this.em();
    if (!(await em.count(Member, { userId, organizationId }))) throw notFound('Organization');
    return toOrganizationView(await em.findOneOrFail(Organization, { id: organizationId }));
  }

  /** A new organization owned by `userId`. */
  async createOrganization(userId: string, name: string, logo?: string): Promise<OrganizationView> {
    const em = this.em();
    const org = em.create(Organization, { id: newId(), name, logo: logo ?? null, slug: null, ownerId: userId, createdAt: new Date() });
    em.create(Member, { id: newId(), userId, organizationId: org.id, role: 'owner', createdAt: new Date() });
    await em.flush();
    return toOrganizationView(org);
  }

  /** Renames an organization or changes its logo; its owner or an admin only. */
  async updateOrganization(principal: Principal, organizationId: string, patch: { name?: string; logo?: string }): Promise<OrganizationView> {
    const em = this.em();
    const member = await em.findOne(Member, { userId: principal.userId, organizationId });
    if (!member) throw notFound('Organization');
    if (member.role === 'member') throw forbidden();
    const org = await em.findOneOrFail(Organization, { id: organizationId });
    if (patch.name !== undefined) org.name = patch.name;
    if (patch.logo !== undefined) org.logo = patch.logo;
    await em.flush();
    return toOrganizationView(org);
  }

  /** Deletes an organization the caller owns. Records of other namespaces go with it through their foreign keys. */
  async deleteOrganization(principal: Principal, organizationId: string): Promise<void> {
    const em = this.em();
    const member = await em.findOne(Member, { userId: principal.userId, organizationId });
    if (!member) throw notFound('Organization');
    if (member.role !== 'owner') throw forbidden('Only the owner can delete an organization');
    if ((await em.count(Member, { userId: principal.userId, role: 'owner' })) < 2) throw forbidden('You cannot delete your only organization');
    for (const remove of this.#removers) await remove(organizationId, em);
    await em.nativeDelete(Organization, { id: organizationId });
    this.deps.sessions.invalidate();
  }

  /** Makes an organization the caller's default, and the active one of the calling session. */
  async setDefaultOrganization(principal: Principal, organizationId: string): Promise<void> {
    const em = this.em();
    if (!(await em.count(Member, { userId: principal.userId, organizationId }))) throw notFound('Organization');
    await em.nativeUpdate(User, { id: principal.userId }, { defaultOrganizationId: organizationId });
    if (principal.via === 'session') await em.nativeUpdate(Session, { id: principal.credentialId }, { organizationId });
    this.deps.sessions.invalidate();
  }

  /** Invites `email` into the caller's organization for a week; the token is in `token`. */
  async invite(principal: Principal, email: string, role: 'admin' | 'member'): Promise<InvitationView & { token: string }> {
    const em = this.em();
    const token = newToken(24);
    const inv = em.create(Invitation, {
      id: newId(), organizationId: principal.organizationId, email: email.trim().toLowerCase(), role, status: 'pending',
      tokenHash: hashToken(token), inviterId: principal.userId, expiresAt: new Date(Date.now() + 7 * DAY), createdAt: new Date(),
    });
    await em.flush();
    return { ...toInvitationView(inv), token };
  }

  /** Every invitation of an organization, oldest first, whatever its status. */
  async invitations(organizationId: string): Promise<InvitationView[]> {
    return (await this.em().find(Invitation, { organizationId }, { orderBy: { createdAt: 'asc' } })).map(toInvitationView);
  }

  /** Withdraws an invitation (it stays listed, as canceled). */
  async cancelInvitation(organizationId: string, invitationId: string): Promise<void> {
    const em = this.em();
    const inv = await em.findOne(Invitation, { id: invitationId, organizationId });
    if (!inv) throw notFound('Invitation');
    inv.status = 'canceled';
    await em.flush();
  }

  /** An invited person sets a password (older auth.createUser: id = invitation id, token = its token). */
  async acceptInvitation(invitationId: string, token: string, password: string): Promise<SignedIn> {
    const em = this.em();
    const inv = await em.findOne(Invitation, { id: invitationId, status: 'pending' });
    if (!inv || inv.tokenHash !== hashToken(token) || inv.expiresAt.getTime() < Date.now()) throw unauthorized('Invalid or expired invitation');
    let user = await em.findOne(User, { email: inv.email });
    // The invitation token is known to the inviter: for an existing account it proves nothing.
    if (user && !(await verifyPassword(password, user.passwordHash))) throw unauthorized('An account with this e-mail exists: accept with its password');
    if (!user) user = await newUser(em, inv.email, password);
    user.defaultOrganizationId ??= inv.organizationId;
    if (!(await em.count(Member, { userId: user.id, organizationId: inv.organizationId }))) {
      em.create(Member, { id: newId(), userId: user.id, organizationId: inv.organizationId, role: inv.role, createdAt: new Date() });
    }
    inv.status = 'accepted';
    await em.flush();
    return this.deps.sessions.signIn(user.id, 'session', inv.organizationId);
  }
}

const toOrganizationView = (o: InstanceType<typeof Organization.class>): OrganizationView => ({
  id: o.id, organizationId: o.id, name: o.name, slug: o.slug ?? null, logo: o.logo ?? null, ownerId: o.ownerId, createdAt: iso(o.createdAt)!,
  metadata: null, defaultRole: null,
});
const toInvitationView = (i: InstanceType<typeof Invitation.class>): InvitationView => ({
  id: i.id, invitationId: i.id, organizationId: i.organizationId, email: i.email, role: i.role, status: i.status,
  expiresAt: iso(i.expiresAt)!, createdAt: iso(i.createdAt)!,
});
