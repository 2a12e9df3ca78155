// Accounts, organizations, sessions, API keys and two-factor login. Credentials are stored
// as hashes, TOTP secrets sealed; nothing here logs a secret.
import type { MikroORM, EntityManager } from '@mikro-orm/postgresql';
import { conflict, forbidden, notFound, unauthorized, invalidField, badRequest } from '../errors.ts';
import { hashPassword, hashToken, newId, newToken, verifyPassword, type SecretBox } from '../crypto.ts';
import type { Principal, Role } from '../procedure.ts';
import { ApiKey, Invitation, Member, Organization, Session, User } from './entities.ts';
import { iso, type ApiKeyView, type AuthUserView, type InvitationView, type MemberView, type OrganizationView, type UserView } from './views.ts';

type UserRow = InstanceType<typeof User.class>;
type MemberRow = InstanceType<typeof Member.class>;
type OrgRow = InstanceType<typeof Organization.class>;

const DAY = 24 * 3600 * 1000;
const SESSION_TTL = 30 * DAY;
const PENDING_2FA_TTL = 5 * 60 * 1000;
const MAX_2FA_ATTEMPTS = 5;
const CACHE_TTL = 5000;

export interface SignedIn {
  token: string | null;
  is2FAEnabled: boolean;
  id: string;
  organizationId: string | null;
  user: AuthUserView;
}

export class IdentityService {
  readonly #orm: MikroORM;
  readonly #secrets: SecretBox;
  /** Recently verified credentials (hash → principal), dropped on every identity change. */
  readonly #cache = new Map<string, { principal: Principal; until: number }>();

  constructor({ orm, secrets }: { orm: MikroORM; secrets: SecretBox }) {
    this.#orm = orm;
    this.#secrets = secrets;
  }

  #em(): EntityManager {
    return this.#orm.em.fork() as EntityManager;
  }
  invalidate(): void {
    this.#cache.clear();
  }

  // ---------------------------------------------------------------- authentication
  /** The principal behind an `x-api-key` or bearer token; null when none is given; 401 when it is wrong. */
  async authenticate(apiKey: string | undefined, bearer: string | undefined): Promise<Principal | null> {
    const secret = apiKey ?? bearer;
    if (!secret) return null;
    const hash = hashToken(secret);
    // Keyed by kind too: a session token sent as x-api-key must not pass on a cache hit.
    const cacheKey = `${apiKey !== undefined ? 'key' : 'bearer'}:${hash}`;
    const hit = this.#cache.get(cacheKey);
    if (hit && hit.until > Date.now()) return hit.principal;
    const conn = this.#orm.em.getConnection();
    let principal: Principal | null = null;
    let expiresAt = Infinity;
    if (apiKey !== undefined) {
      const rows = await conn.execute<{ id: string; user_id: string; organization_id: string; expires_at: Date | null; role: Role }[]>(
        `select k.id, k.user_id, k.organization_id, k.expires_at, m.role from api_keys k
           join members m on m.user_id = k.user_id and m.organization_id = k.organization_id
          where k.key_hash = ?`, [hash]);
      const r = rows[0];
      if (r && (!r.expires_at || new Date(r.expires_at).getTime() > Date.now())) {
        principal = { userId: r.user_id, organizationId: r.organization_id, role: r.role, via: 'apiKey', credentialId: r.id };
        if (r.expires_at) expiresAt = new Date(r.expires_at).getTime();
      }
    } else {
      const rows = await conn.execute<{ id: string; user_id: string; organization_id: string; expires_at: Date | null; role: Role }[]>(
        `select s.id, s.user_id, s.organization_id, s.expires_at, m.role from sessions s
           join members m on m.user_id = s.user_id and m.organization_id = s.organization_id
          where s.token_hash = ? and s.kind in ('session', 'token')`, [hash]);
      const r = rows[0];
      if (r && (!r.expires_at || new Date(r.expires_at).getTime() > Date.now())) {
        principal = { userId: r.user_id, organizationId: r.organization_id, role: r.role, via: 'session', credentialId: r.id };
        if (r.expires_at) expiresAt = new Date(r.expires_at).getTime();
      }
    }
    if (!principal) throw unauthorized('Invalid or expired credentials');
    // Never past the credential's own expiry.
    this.#cache.set(cacheKey, { principal, until: Math.min(Date.now() + CACHE_TTL, expiresAt) });
    if (this.#cache.size > 5000) this.#cache.delete(this.#cache.keys().next().value!);
    return principal;
  }

  // ---------------------------------------------------------------- accounts
  async ownerExists(): Promise<boolean> {
    return (await this.#em().count(Member, { role: 'owner' })) > 0;
  }

  /** The first account: an owner with a fresh default organization. Only while there is no owner. */
  async createFirstAdmin(email: string, password: string): Promise<SignedIn> {
    const em = this.#em();
    const userId = await em.transactional(async tx => {
      // Serialise concurrent first-admin requests: exactly one wins.
      await tx.getConnection().execute('select pg_advisory_xact_lock(7262001)', [], 'all', tx.getTransactionContext());
      // A loser of the race called without credentials, like any later caller: 401, not 403.
      if ((await tx.count(Member, { role: 'owner' })) > 0) throw unauthorized('An admin already exists: sign in as an admin to add another');
      const user = await this.#newUser(tx, email, password);
      const org = tx.create(Organization, { id: newId(), name: 'My Organization', ownerId: user.id, slug: null, logo: null, createdAt: new Date() });
      tx.create(Member, { id: newId(), userId: user.id, organizationId: org.id, role: 'owner', createdAt: new Date() });
      user.defaultOrganizationId = org.id;
      return user.id;
    });
    return this.#signIn(userId, 'session');
  }

  /** A new account added to an organization by one of its admins. */
  async createUser(input: { email: string; password: string; role: 'admin' | 'member'; organizationId: string }): Promise<MemberView> {
    const em = this.#em();
    const user = await this.#newUser(em, input.email, input.password);
    user.defaultOrganizationId = input.organizationId;
    const member = em.create(Member, { id: newId(), userId: user.id, organizationId: input.organizationId, role: input.role, createdAt: new Date() });
    await em.flush();
    return this.#memberView(member, user);
  }

  async #newUser(em: EntityManager, email: string, password: string): Promise<UserRow> {
    const normalized = email.trim().toLowerCase();
    if (await em.count(User, { email: normalized })) throw conflict(`A user with e-mail ${normalized} already exists`);
    return em.create(User, {
      id: newId(), email: normalized, passwordHash: await hashPassword(password), firstName: '', lastName: '', image: null,
      twoFactorSecret: null, twoFactorEnabled: false, defaultOrganizationId: null, createdAt: new Date(), updatedAt: new Date(),
    });
  }

  async login(email: string, password: string): Promise<SignedIn> {
    const em = this.#em();
    const user = await em.findOne(User, { email: email.trim().toLowerCase() });
    // Same answer for an unknown e-mail and a wrong password.
    if (!user || !(await verifyPassword(password, user.passwordHash))) throw unauthorized('Invalid e-mail or password');
    if (user.twoFactorEnabled) return this.#signIn(user.id, 'pending2fa');
    return this.#signIn(user.id, 'session');
  }

  async verifyLogin2FA(userId: string, pin: string): Promise<SignedIn> {
    const em = this.#em();
    const pending = await em.findOne(Session, { userId, kind: 'pending2fa', expiresAt: { $gt: new Date() } }, { orderBy: { createdAt: 'desc' } });
    if (!pending) throw unauthorized('No pending two-factor login for this account; log in with the password first');
    const user = await em.findOneOrFail(User, { id: userId });
    const step = user.twoFactorEnabled && user.twoFactorSecret ? await totpStep(this.#secrets.decrypt(user.twoFactorSecret), pin) : null;
    // A code already used to sign in (or an older one) is refused, even inside its 30 s window.
    if (step === null || (user.twoFactorLastStep != null && step <= user.twoFactorLastStep)) {
      pending.attempts += 1;
      if (pending.attempts >= MAX_2FA_ATTEMPTS) em.remove(pending);
      await em.flush();
      throw unauthorized('Invalid two-factor code');
    }
    user.twoFactorLastStep = step;
    em.remove(pending);
    await em.flush();
    return this.#signIn(userId, 'session');
  }

  async #signIn(userId: string, kind: 'session' | 'token' | 'pending2fa', organizationId?: string): Promise<SignedIn> {
    const em = this.#em();
    const user = await em.findOneOrFail(User, { id: userId });
    const orgId = organizationId ?? (await this.#activeOrganization(em, user));
    const token = newToken();
    const ttl = kind === 'session' ? SESSION_TTL : kind === 'pending2fa' ? PENDING_2FA_TTL : null;
    em.create(Session, {
      id: newId(), tokenHash: hashToken(token), userId, organizationId: orgId, kind, attempts: 0,
      expiresAt: ttl ? new Date(Date.now() + ttl) : null, createdAt: new Date(),
    });
    await em.flush();
    const view = await this.authUser(userId, orgId);
    return { token: kind === 'pending2fa' ? null : token, is2FAEnabled: user.twoFactorEnabled, id: userId, organizationId: orgId, user: view };
  }

  async #activeOrganization(em: EntityManager, user: UserRow): Promise<string | null> {
    if (user.defaultOrganizationId && (await em.count(Member, { userId: user.id, organizationId: user.defaultOrganizationId }))) return user.defaultOrganizationId;
    const first = await em.findOne(Member, { userId: user.id }, { orderBy: { createdAt: 'asc' } });
    return first?.organizationId ?? null;
  }

  /** A long-lived bearer token for scripts (older auth.generateToken / user.generateToken). */
  async generateToken(principal: Principal): Promise<string> {
    const signed = await this.#signIn(principal.userId, 'token', principal.organizationId);
    return signed.token!;
  }

  async logout(principal: Principal): Promise<void> {
    if (principal.via === 'session') await this.#em().nativeDelete(Session, { id: principal.credentialId });
    this.invalidate();
  }

  // ---------------------------------------------------------------- reads
  async authUser(userId: string, organizationId: string | null): Promise<AuthUserView> {
    const em = this.#em();
    const user = await em.findOne(User, { id: userId });
    if (!user) throw notFound('User');
    const member = organizationId ? await em.findOne(Member, { userId, organizationId }) : null;
    return toAuthUser(user, member);
  }

  /** The membership of a user in an organization, with the user. NOT_FOUND when it is not a member. */
  async member(userId: string, organizationId: string): Promise<MemberView> {
    const em = this.#em();
    const member = await em.findOne(Member, { userId, organizationId });
    if (!member) throw notFound('User');
    return this.#memberView(member, await em.findOneOrFail(User, { id: userId }));
  }

  async members(organizationId: string): Promise<MemberView[]> {
    const em = this.#em();
    const members = await em.find(Member, { organizationId }, { orderBy: { createdAt: 'asc' } });
    const users = await em.find(User, { id: { $in: members.map(m => m.userId) } });
    const byId = new Map(users.map(u => [u.id, u]));
    return members.map(m => this.#memberView(m, byId.get(m.userId)!));
  }

  #memberView(m: MemberRow, u: UserRow): MemberView {
    return { id: m.id, userId: m.userId, organizationId: m.organizationId, role: m.role, createdAt: iso(m.createdAt)!, user: toUserView(u) };
  }

  /** Changes an account; `by` is the caller when it may be someone else's. */
  async updateUser(userId: string, patch: { email?: string | null; password?: string | null; firstName?: string; lastName?: string; image?: string | null }, by?: Principal): Promise<void> {
    const em = this.#em();
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
      user.passwordHash = await hashPassword(patch.password);
    }
    if (patch.firstName !== undefined) user.firstName = patch.firstName;
    if (patch.lastName !== undefined) user.lastName = patch.lastName;
    if (patch.image !== undefined) user.image = patch.image;
    await em.flush();
    this.invalidate();
  }

  /**
   * Someone else's account: only an admin of its organization changes it, never the owner's, and
   * its e-mail or password only while it belongs to no other organization (where that admin has no say).
   */
  async #assertMayChange(em: EntityManager, by: Principal, userId: string, credentials: boolean): Promise<void> {
    const member = await em.findOne(Member, { userId, organizationId: by.organizationId });
    if (!member) throw notFound('User');
    if (by.role === 'member') throw forbidden();
    if (member.role === 'owner') throw forbidden('Only the owner can change the owner\'s account');
    if (credentials && (await em.count(Member, { userId, organizationId: { $ne: by.organizationId } }))) {
      throw forbidden('This account belongs to other organizations too: only its holder can change its e-mail or password');
    }
  }

  /** Removes a user from an organization; the account goes too when it belongs nowhere else. */
  async removeMember(userId: string, organizationId: string, by: Principal): Promise<void> {
    const em = this.#em();
    const member = await em.findOne(Member, { userId, organizationId });
    if (!member) throw notFound('User');
    if (member.role === 'owner') throw forbidden('The owner of an organization cannot be removed');
    if (userId === by.userId) throw forbidden('You cannot remove yourself');
    em.remove(member);
    await em.nativeDelete(ApiKey, { userId, organizationId });
    await em.flush();
    if ((await em.count(Member, { userId })) === 0) await em.nativeDelete(User, { id: userId });
    this.invalidate();
  }

  /** Changes a member's role; `who` is the membership id or the user id. */
  async setRole(who: string, organizationId: string, role: 'admin' | 'member'): Promise<MemberView> {
    const em = this.#em();
    const member = await em.findOne(Member, { $or: [{ id: who }, { userId: who }], organizationId });
    if (!member) throw notFound('User');
    if (member.role === 'owner') throw forbidden('The role of the owner cannot be changed');
    member.role = role;
    await em.flush();
    this.invalidate();
    return this.#memberView(member, await em.findOneOrFail(User, { id: member.userId }));
  }

  // ---------------------------------------------------------------- two-factor
  async generate2FASecret(principal: Principal, email: string): Promise<{ secret: string; uri: string; qrCodeUrl: string }> {
    const OTPAuth = await otp();
    const secret = new OTPAuth.Secret({ size: 20 });
    const totp = new OTPAuth.TOTP({ issuer: 'Berth', label: email, secret });
    void principal;
    const uri = totp.toString();
    return { secret: secret.base32, uri, qrCodeUrl: uri };
  }

  async verify2FASetup(userId: string, secret: string, pin: string): Promise<void> {
    if (!/^[A-Z2-7]+=*$/.test(secret)) throw invalidField('secret', 'must be a base32 TOTP secret');
    if (!(await checkTotp(secret, pin))) throw badRequest('Invalid two-factor code', [{ path: ['pin'], message: 'pin: does not match the secret' }]);
    const em = this.#em();
    const user = await em.findOneOrFail(User, { id: userId });
    user.twoFactorSecret = this.#secrets.encrypt(secret);
    user.twoFactorEnabled = true;
    await em.flush();
  }

  async disable2FA(userId: string): Promise<void> {
    const em = this.#em();
    const user = await em.findOneOrFail(User, { id: userId });
    user.twoFactorSecret = null;
    user.twoFactorEnabled = false;
    await em.flush();
  }

  // ---------------------------------------------------------------- API keys
  async createApiKey(principal: Principal, input: { name: string; prefix?: string; expiresIn?: number; organizationId: string; metadata?: Record<string, unknown> }): Promise<ApiKeyView & { key: string }> {
    const em = this.#em();
    // A key acts in one organization: the caller must belong to it (404 otherwise, like any foreign record).
    if (!(await em.count(Member, { userId: principal.userId, organizationId: input.organizationId }))) throw notFound('Organization');
    const key = `${input.prefix ?? ''}${newToken(32)}`;
    const row = em.create(ApiKey, {
      id: newId(), name: input.name, prefix: input.prefix ?? null, start: key.slice(0, 8), keyHash: hashToken(key),
      userId: principal.userId, organizationId: input.organizationId, metadata: input.metadata ?? null,
      expiresAt: input.expiresIn ? new Date(Date.now() + input.expiresIn * 1000) : null, lastUsedAt: null, createdAt: new Date(),
    });
    await em.flush();
    return { ...toApiKeyView(row), key };
  }

  async listApiKeys(userId: string): Promise<ApiKeyView[]> {
    return (await this.#em().find(ApiKey, { userId }, { orderBy: { createdAt: 'asc' } })).map(toApiKeyView);
  }

  async deleteApiKey(principal: Principal, apiKeyId: string): Promise<void> {
    const deleted = await this.#em().nativeDelete(ApiKey, { id: apiKeyId, userId: principal.userId });
    if (!deleted) throw notFound('API key');
    this.invalidate();
  }

  // ---------------------------------------------------------------- organizations
  async organizationsOf(userId: string): Promise<OrganizationView[]> {
    const em = this.#em();
    const members = await em.find(Member, { userId });
    const orgs = await em.find(Organization, { id: { $in: members.map(m => m.organizationId) } }, { orderBy: { createdAt: 'asc' } });
    return orgs.map(toOrganizationView);
  }

  async organization(userId: string, organizationId: string): Promise<OrganizationView> {
    const em = this.#em();
    if (!(await em.count(Member, { userId, organizationId }))) throw notFound('Organization');
    return toOrganizationView(await em.findOneOrFail(Organization, { id: organizationId }));
  }

  async createOrganization(userId: string, name: string, logo?: string): Promise<OrganizationView> {
    const em = this.#em();
    const org = em.create(Organization, { id: newId(), name, logo: logo ?? null, slug: null, ownerId: userId, createdAt: new Date() });
    em.create(Member, { id: newId(), userId, organizationId: org.id, role: 'owner', createdAt: new Date() });
    await em.flush();
    return toOrganizationView(org);
  }

  async updateOrganization(principal: Principal, organizationId: string, patch: { name?: string; logo?: string }): Promise<OrganizationView> {
    const em = this.#em();
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
    const em = this.#em();
    const member = await em.findOne(Member, { userId: principal.userId, organizationId });
    if (!member) throw notFound('Organization');
    if (member.role !== 'owner') throw forbidden('Only the owner can delete an organization');
    if ((await em.count(Member, { userId: principal.userId, role: 'owner' })) < 2) throw forbidden('You cannot delete your only organization');
    await em.nativeDelete(Organization, { id: organizationId });
    this.invalidate();
  }

  async setDefaultOrganization(principal: Principal, organizationId: string): Promise<void> {
    const em = this.#em();
    if (!(await em.count(Member, { userId: principal.userId, organizationId }))) throw notFound('Organization');
    await em.nativeUpdate(User, { id: principal.userId }, { defaultOrganizationId: organizationId });
    if (principal.via === 'session') await em.nativeUpdate(Session, { id: principal.credentialId }, { organizationId });
    this.invalidate();
  }

  // ---------------------------------------------------------------- invitations
  async invite(principal: Principal, email: string, role: 'admin' | 'member'): Promise<InvitationView & { token: string }> {
    const em = this.#em();
    const token = newToken(24);
    const inv = em.create(Invitation, {
      id: newId(), organizationId: principal.organizationId, email: email.trim().toLowerCase(), role, status: 'pending',
      tokenHash: hashToken(token), inviterId: principal.userId, expiresAt: new Date(Date.now() + 7 * DAY), createdAt: new Date(),
    });
    await em.flush();
    return { ...toInvitationView(inv), token };
  }

  async invitations(organizationId: string): Promise<InvitationView[]> {
    return (await this.#em().find(Invitation, { organizationId }, { orderBy: { createdAt: 'asc' } })).map(toInvitationView);
  }

  async cancelInvitation(organizationId: string, invitationId: string): Promise<void> {
    const em = this.#em();
    const inv = await em.findOne(Invitation, { id: invitationId, organizationId });
    if (!inv) throw notFound('Invitation');
    inv.status = 'canceled';
    await em.flush();
  }

  /** An invited person sets a password (older auth.createUser: id = invitation id, token = its token). */
  async acceptInvitation(invitationId: string, token: string, password: string): Promise<SignedIn> {
    const em = this.#em();
    const inv = await em.findOne(Invitation, { id: invitationId, status: 'pending' });
    if (!inv || inv.tokenHash !== hashToken(token) || inv.expiresAt.getTime() < Date.now()) throw unauthorized('Invalid or expired invitation');
    let user = await em.findOne(User, { email: inv.email });
    // The invitation token is known to the inviter: for an existing account it proves nothing.
    if (user && !(await verifyPassword(password, user.passwordHash))) throw unauthorized('An account with this e-mail exists: accept with its password');
    if (!user) user = await this.#newUser(em, inv.email, password);
    user.defaultOrganizationId ??= inv.organizationId;
    if (!(await em.count(Member, { userId: user.id, organizationId: inv.organizationId }))) {
      em.create(Member, { id: newId(), userId: user.id, organizationId: inv.organizationId, role: inv.role, createdAt: new Date() });
    }
    inv.status = 'accepted';
    await em.flush();
    return this.#signIn(user.id, 'session', inv.organizationId);
  }

  /** Deletes expired sessions and pending logins (run by a repeating job). */
  async purgeExpired(): Promise<number> {
    return this.#em().nativeDelete(Session, { expiresAt: { $lt: new Date() } });
  }
}

/** Two-factor codes are rare: the TOTP library is loaded on first use, not at boot. */
const otp = () => import('otpauth');

const PERIOD = 30;

/** The time step the code belongs to (now ± one step), or null when it matches none. */
async function totpStep(base32: string, pin: string): Promise<number | null> {
  const OTPAuth = await otp();
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(base32), digits: 6, period: PERIOD, algorithm: 'SHA1' });
  const now = Date.now();
  const delta = totp.validate({ token: pin.trim(), window: 1, timestamp: now });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD) + delta;
}

async function checkTotp(base32: string, pin: string): Promise<boolean> {
  return (await totpStep(base32, pin)) !== null;
}

export const toUserView = (u: UserRow): UserView => ({
  id: u.id, email: u.email, firstName: u.firstName, lastName: u.lastName, image: u.image ?? null,
  twoFactorEnabled: u.twoFactorEnabled, createdAt: iso(u.createdAt)!, updatedAt: iso(u.updatedAt)!,
});
export const toAuthUser = (u: UserRow, m: MemberRow | null): AuthUserView => ({
  id: u.id, userId: u.id, email: u.email, rol: m && m.role !== 'member' ? 'admin' : 'user', image: u.image ?? null,
  secret: null, token: null, is2FAEnabled: u.twoFactorEnabled, organizationId: m?.organizationId ?? null, createdAt: iso(u.createdAt)!,
});
const toOrganizationView = (o: OrgRow): OrganizationView => ({
  id: o.id, organizationId: o.id, name: o.name, slug: o.slug ?? null, logo: o.logo ?? null, ownerId: o.ownerId, createdAt: iso(o.createdAt)!,
});
const toApiKeyView = (k: InstanceType<typeof ApiKey.class>): ApiKeyView => ({
  id: k.id, apiKeyId: k.id, name: k.name, prefix: k.prefix ?? null, start: k.start, userId: k.userId, organizationId: k.organizationId,
  metadata: k.metadata ?? null, expiresAt: iso(k.expiresAt), lastUsedAt: iso(k.lastUsedAt), createdAt: iso(k.createdAt)!,
});
const toInvitationView = (i: InstanceType<typeof Invitation.class>): InvitationView => ({
  id: i.id, invitationId: i.id, organizationId: i.organizationId, email: i.email, role: i.role, status: i.status,
  expiresAt: iso(i.expiresAt)!, createdAt: iso(i.createdAt)!,
});
