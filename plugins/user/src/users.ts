// Accounts and their memberships as user.*, auth.* and organization.* manage them: the first
// admin, accounts added by admins or by accepting an invitation, profiles and roles, removal. The
// tables are the kernel's; passwords are stored as hashes and nothing here logs one.
import {
  ApiKey,
  CustomRole,
  IdentityStore,
  Invitation,
  Member,
  Organization,
  User,
  authUserView,
  conflict,
  forbidden,
  hashPassword,
  hashToken,
  invalidField,
  newId,
  findOwned,
  notFound,
  unauthorized,
  verifyPassword,
  type AuthUserView,
  type EntityManager,
  type Principal,
} from '@berth/core';
import { toMemberView, type MemberView } from './views.ts';

/** A new account in `em` (written by its next flush); CONFLICT when the e-mail is taken. */
async function newUser(em: EntityManager, email: string, password: string) {
  const normalized = email.trim().toLowerCase();
  if (await em.count(User, { email: normalized })) throw conflict(`A user with e-mail ${normalized} already exists`);
  return em.create(User, {
    id: newId(),
    email: normalized,
    passwordHash: await hashPassword(password),
    firstName: '',
    lastName: '',
    image: null,
    twoFactorSecret: null,
    twoFactorEnabled: false,
    defaultOrganizationId: null,
    createdAt: new Date(),
    updatedAt: new Date(),
  });
}

/** The organization's billing as the peer shows it on its owner's user row (the billing plugin's, when enabled). */
export type BillingFields = Pick<MemberView['user'], 'stripeCustomerId' | 'stripeSubscriptionId' | 'serversQuantity'>;

export class UserService extends IdentityStore<'sessions' | 'config' | 'events'> {
  #billing?: (organizationId: string) => Promise<BillingFields | null>;

  /** Where an owner's view reads its organization's billing fields (set by the billing plugin). */
  billingFrom(read: (organizationId: string) => Promise<BillingFields | null>): void {
    this.#billing = read;
  }

  /** The owner's user row carries the organization's billing, as the peer's (it keeps billing on the owner's user). */
  async #withBilling(view: MemberView): Promise<MemberView> {
    const fields = view.role === 'owner' && this.#billing ? await this.#billing(view.organizationId) : null;
    return fields ? { ...view, user: { ...view.user, ...fields } } : view;
  }

  /** The first account: an owner with a fresh default organization. Only while there is no owner. */
  async createFirstAdmin(email: string, password: string) {
    const { userId, organizationId } = await this.em().transactional(async tx => {
      // Serialise concurrent first-admin requests: exactly one wins.
      await tx.getConnection().execute('select pg_advisory_xact_lock(7262001)', [], 'all', tx.getTransactionContext());
      // A loser of the race called without credentials, like any later caller: 401, not 403.
      if ((await tx.count(Member, { role: 'owner' })) > 0) throw unauthorized('An admin already exists: sign in as an admin to add another');
      const user = await newUser(tx, email, password);
      const org = tx.create(Organization, { id: newId(), name: 'My Organization', ownerId: user.id, slug: null, logo: null, createdAt: new Date() });
      tx.create(Member, { id: newId(), userId: user.id, organizationId: org.id, role: 'owner', createdAt: new Date() });
      user.defaultOrganizationId = org.id;
      return { userId: user.id, organizationId: org.id };
    });
    this.deps.events.emit('organizationCreated', { organizationId, at: new Date().toISOString() });
    return this.deps.sessions.signIn(userId, 'session');
  }

  /** An invited person sets a password (older auth.createUser: id = invitation id, token = its token). */
  async acceptInvitation(invitationId: string, token: string, password: string) {
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

  /** A new account added to an organization by one of its admins. */
  async createUser(input: { email: string; password: string; role: 'admin' | 'member'; organizationId: string }): Promise<MemberView> {
    const em = this.em();
    const user = await newUser(em, input.email, input.password);
    user.defaultOrganizationId = input.organizationId;
    const member = em.create(Member, { id: newId(), userId: user.id, organizationId: input.organizationId, role: input.role, createdAt: new Date() });
    await em.flush();
    return toMemberView(member, user);
  }

  /** An account as the older variant shows it, with its role in `organizationId`. */
  async authUser(userId: string, organizationId: string | null): Promise<AuthUserView> {
    return authUserView(this.em(), userId, organizationId);
  }

  /** The membership of a user in an organization, with the user. NOT_FOUND when it is not a member. */
  async member(userId: string, organizationId: string): Promise<MemberView> {
    const em = this.em();
    const member = await findOwned(em, Member, { userId }, organizationId, 'User');
    return this.#withBilling(toMemberView(member, await em.findOneOrFail(User, { id: userId })));
  }

  /** Every membership of an organization, oldest first, with its user. */
  async members(organizationId: string): Promise<MemberView[]> {
    const em = this.em();
    const members = await em.find(Member, { organizationId }, { orderBy: { createdAt: 'asc' } });
    const users = await em.find(User, { id: { $in: members.map(m => m.userId) } });
    const byId = new Map(users.map(u => [u.id, u]));
    return Promise.all(members.map(m => this.#withBilling(toMemberView(m, byId.get(m.userId)!))));
  }

  /**
   * How many organizations a user belongs to: the caller's own count, or a member's of the caller's
   * organization for its owner and admins (FORBIDDEN for a member asking of someone else, NOT_FOUND for
   * a user who is not a member of the caller's organization).
   */
  async organizationCount(userId: string, by: Principal): Promise<number> {
    const em = this.em();
    if (userId !== by.userId) {
      if (by.role === 'member') throw forbidden("Only admins and owners can check other users' organizations");
      await findOwned(em, Member, { userId }, by.organizationId, 'User');
    }
    return em.count(Member, { userId });
  }

  /** Changes an account; `by` is the caller when it may be someone else's. */
  async updateUser(
    userId: string,
    patch: { email?: string | null; password?: string | null; currentPassword?: string | null; firstName?: string; lastName?: string; image?: string | null },
    by?: Principal,
  ): Promise<void> {
    const em = this.em();
    if (by && by.userId !== userId) await this.#assertMayChange(em, by, userId, Boolean(patch.email || patch.password));
    const user = await em.findOne(User, { id: userId });
    if (!user) throw notFound('User');
    if (patch.email) {
      const email = patch.email.trim().toLowerCase();
      if (email !== user.email && (await em.count(User, { email }))) throw conflict(`A user with e-mail ${email} already exists`);
      user.email = email;
    }
    if (patch.password) {
      if (patch.password.length < 8) throw invalidField('password', 'must be at least 8 characters');
      // One's own password changes only with the current one: a stolen session must not lock the owner out.
      if (!by || by.userId === userId) {
        if (!patch.currentPassword) throw invalidField('currentPassword', 'is required to change the password');
        if (!(await verifyPassword(patch.currentPassword, user.passwordHash))) throw invalidField('currentPassword', 'is not the current password');
      }
      user.passwordHash = await hashPassword(patch.password);
    }
    if (patch.firstName !== undefined) user.firstName = patch.firstName;
    if (patch.lastName !== undefined) user.lastName = patch.lastName;
    if (patch.image !== undefined) user.image = patch.image;
    await em.flush();
    this.deps.sessions.invalidate();
  }

  /**
   * Someone else's account: only an admin of its organization changes it, never the owner's, and
   * its e-mail or password only while it belongs to no other organization (where that admin has no say).
   */
  async #assertMayChange(em: EntityManager, by: Principal, userId: string, credentials: boolean): Promise<void> {
    const member = await findOwned(em, Member, { userId }, by.organizationId, 'User');
    if (by.role === 'member') throw forbidden();
    if (member.role === 'owner') throw forbidden("Only the owner can change the owner's account");
    if (credentials && (await em.count(Member, { userId, organizationId: { $ne: by.organizationId } }))) {
      throw forbidden('This account belongs to other organizations too: only its holder can change its e-mail or password');
    }
  }

  /** Removes a user from an organization; the account goes too when it belongs nowhere else. */
  async removeMember(userId: string, organizationId: string, by: Principal): Promise<void> {
    const em = this.em();
    const member = await findOwned(em, Member, { userId }, organizationId, 'User');
    if (member.role === 'owner') throw forbidden('The owner of an organization cannot be removed');
    if (userId === by.userId) throw forbidden('You cannot remove yourself');
    em.remove(member);
    await em.nativeDelete(ApiKey, { userId, organizationId });
    await em.flush();
    if ((await em.count(Member, { userId })) === 0) await em.nativeDelete(User, { id: userId });
    this.deps.sessions.invalidate();
  }

  /** Changes a member's role; `who` is the membership id or the user id. */
  async setRole(who: string, organizationId: string, role: string): Promise<MemberView> {
    const em = this.em();
    const member = await findOwned(em, Member, { $or: [{ id: who }, { userId: who }] }, organizationId, 'User');
    if (member.role === 'owner') throw forbidden('The role of the owner cannot be changed');
    if (role === 'owner') throw invalidField('role', 'an organization has one owner: admin, member or a custom role');
    if (role !== 'admin' && role !== 'member' && !(await em.count(CustomRole, { organizationId, role })))
      throw invalidField('role', `no role "${role}" in this organization: admin, member or a custom role (customRole.all)`);
    member.role = role;
    await em.flush();
    this.deps.sessions.invalidate();
    return toMemberView(member, await em.findOneOrFail(User, { id: member.userId }));
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** Accounts and memberships, managed; from the user plugin. */
    users: UserService;
  }
}
