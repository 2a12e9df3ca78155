// Organizations (the tenants) and the invitations that bring people into them, as organization.*
// manages them; the tables are the kernel's. Invitation tokens are stored as hashes, shown once
// (auth.createUser accepts them).
import { IdentityStore, Invitation, Member, Organization, Session, User, conflict, findOwned, forbidden, hashToken, newId, newToken, notFound, type EntityManager, type Principal } from '@berth/core';
import { toInvitationView, toOrganizationView, type InvitationByToken, type InvitationView, type OrganizationView, type ReceivedInvitation } from './views.ts';

const DAY = 24 * 3600 * 1000;

export type OrganizationRemover = (organizationId: string, em: EntityManager) => Promise<void>;

export class OrganizationService extends IdentityStore<'sessions' | 'accounts' | 'events'> {
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
    // Placement by ownership: the nodes every organization shares get its label (the hosts plugin).
    this.deps.events.emit('organizationCreated', { organizationId: org.id, at: new Date().toISOString() });
    return toOrganizationView(org);
  }

  /** Renames an organization or changes its logo; its owner or an admin only. */
  async updateOrganization(principal: Principal, organizationId: string, patch: { name?: string; logo?: string }): Promise<OrganizationView> {
    const em = this.em();
    const member = await findOwned(em, Member, { userId: principal.userId }, organizationId, 'Organization');
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
    const member = await findOwned(em, Member, { userId: principal.userId }, organizationId, 'Organization');
    if (member.role !== 'owner') throw forbidden('Only the owner can delete an organization');
    if ((await em.count(Member, { userId: principal.userId, role: 'owner' })) < 2) throw forbidden('You cannot delete your only organization');
    // This machine, its swarm and its proxy are the instance organization's (docs/security.md): it stays.
    if (organizationId === (await this.deps.accounts.instanceOrganizationId())) throw conflict("The instance's organization (the first admin's) cannot be deleted: it operates this machine");
    for (const remove of this.#removers) await remove(organizationId, em);
    await em.nativeDelete(Organization, { id: organizationId });
    this.deps.sessions.invalidate();
    this.deps.events.emit('organizationRemoved', { organizationId, at: new Date().toISOString() });
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
      id: newId(),
      organizationId: principal.organizationId,
      email: email.trim().toLowerCase(),
      role,
      status: 'pending',
      tokenHash: hashToken(token),
      inviterId: principal.userId,
      expiresAt: new Date(Date.now() + 7 * DAY),
      createdAt: new Date(),
    });
    await em.flush();
    return { ...toInvitationView(inv), token };
  }

  /** Every invitation of an organization, oldest first, whatever its status. */
  async invitations(organizationId: string): Promise<InvitationView[]> {
    return (await this.em().find(Invitation, { organizationId }, { orderBy: { createdAt: 'asc' } })).map(toInvitationView);
  }

  /** The pending, unexpired invitations addressed to `email`, in every organization, oldest first, each with its organization. */
  async invitationsTo(email: string): Promise<ReceivedInvitation[]> {
    const em = this.em();
    const rows = await em.find(Invitation, { email: email.trim().toLowerCase(), status: 'pending', expiresAt: { $gt: new Date() } }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    const orgs = new Map((await em.find(Organization, { id: { $in: rows.map(r => r.organizationId) } })).map(o => [o.id, toOrganizationView(o)]));
    return rows.map(r => ({ ...toInvitationView(r), inviterId: r.inviterId, teamId: null, organization: orgs.get(r.organizationId)! }));
  }

  /** The invitation a token (the one its link carries) belongs to, whatever its status; NOT_FOUND for any other token. */
  async invitationByToken(token: string): Promise<InvitationByToken> {
    const em = this.em();
    const inv = await em.findOne(Invitation, { tokenHash: hashToken(token) });
    if (!inv) throw notFound('Invitation');
    return {
      id: inv.id,
      email: inv.email,
      status: inv.status,
      role: inv.role,
      inviterId: inv.inviterId,
      isExpired: inv.expiresAt.getTime() < Date.now(),
      userAlreadyExists: (await em.count(User, { email: inv.email })) > 0,
    };
  }

  /** An invitation of the organization that can still be accepted: NOT_FOUND outside it, CONFLICT once accepted, canceled or expired. */
  async pendingInvitation(organizationId: string, invitationId: string): Promise<InvitationView> {
    const inv = await findOwned(this.em(), Invitation, { id: invitationId }, organizationId, 'Invitation');
    if (inv.status !== 'pending') throw conflict(`The invitation is ${inv.status}: invite ${inv.email} again`);
    if (inv.expiresAt.getTime() < Date.now()) throw conflict(`The invitation expired: invite ${inv.email} again`);
    return toInvitationView(inv);
  }

  /**
   * Gives a pending invitation a new token once `deliver` has sent it (a failed delivery keeps the
   * one before): the token is stored hashed, so a link can only carry a new one, and the token
   * answered before stops working. Answers what `deliver` answers.
   */
  async reissue<T>(organizationId: string, invitationId: string, deliver: (token: string) => Promise<T>): Promise<T> {
    await this.pendingInvitation(organizationId, invitationId);
    const token = newToken(24);
    const delivered = await deliver(token);
    await this.em().nativeUpdate(Invitation, { id: invitationId, organizationId, status: 'pending' }, { tokenHash: hashToken(token) });
    return delivered;
  }

  /** Withdraws an invitation (it stays listed, as canceled). */
  async cancelInvitation(organizationId: string, invitationId: string): Promise<void> {
    const em = this.em();
    const inv = await findOwned(em, Invitation, { id: invitationId }, organizationId, 'Invitation');
    inv.status = 'canceled';
    await em.flush();
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** Organizations and invitations; from the organization plugin. */
    organizations: OrganizationService;
  }
}
