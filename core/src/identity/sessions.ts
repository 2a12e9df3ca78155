// Who is calling: the check of an API key or bearer token, and the sessions a login opens.
// Credentials are stored as hashes; nothing here logs a secret.
import type { EntityManager } from '@mikro-orm/postgresql';
import { unauthorized } from '../errors.ts';
import { optionalService, type Cradle } from '../container.ts';
import { hashToken, newId, newToken, verifyPassword } from '../crypto.ts';
import type { Principal } from '../procedure.ts';
import { builtInRole, grantsOf, type MemberRow } from './grants.ts';
import { Member, Session, User } from './entities.ts';
import type { AuthUserView } from './views.ts';
import { DAY, IdentityStore, authUserView, type UserRow } from './shared.ts';
import { isRecoveryCode, spendRecoveryCode, totpStep } from './two-factor.ts';
import { LOGIN_LIMITS, LoginGuard } from './login-guard.ts';

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

export class SessionService extends IdentityStore<'secrets' | 'clock'> {
  /** Recently verified credentials (hash → principal), dropped on every identity change. */
  readonly #cache = new Map<string, { principal: Principal; until: number }>();
  /** Failed logins and two-factor codes, per account and per client address. */
  readonly #guard = new LoginGuard({ now: () => this.deps.clock.now() });

  /** Forgets every verified credential: called after any change to who may act where. */
  invalidate(): void {
    this.#cache.clear();
  }

  /** The principal behind an `x-api-key` or bearer token; null when none is given; 401 when it is wrong. */
  async authenticate(apiKey: string | undefined, bearer: string | undefined): Promise<Principal | null> {
    const secret = apiKey ?? bearer;
    if (!secret) return null;
    const hash = hashToken(secret);
    // Keyed by kind too: a session token sent as x-api-key must not pass on a cache hit.
    const cacheKey = `${apiKey !== undefined ? 'key' : 'bearer'}:${hash}`;
    const hit = this.#cache.get(cacheKey);
    if (hit && hit.until > Date.now()) return hit.principal;
    // An API key, or a session or long-lived token (never a pending login), with its holder's role.
    const via = apiKey !== undefined ? 'apiKey' : 'session';
    const [table, where] = via === 'apiKey' ? ['api_keys', 'c.key_hash = ?'] : ['sessions', "c.token_hash = ? and c.kind in ('session', 'token')"];
    const [r] = await this.deps.orm.em.getConnection().execute<MemberRow[]>(
      `select c.id, c.user_id, c.organization_id, c.expires_at, m.role, m.switches, m.all_records, m.accessed_projects, m.accessed_environments,
              m.accessed_services, m.accessed_git_providers, m.accessed_servers, r.permission
         from ${table} c
         join members m on m.user_id = c.user_id and m.organization_id = c.organization_id
         left join custom_roles r on r.organization_id = m.organization_id and r.role = m.role
        where ${where}`,
      [hash],
    );
    const expiresAt = r?.expires_at ? new Date(r.expires_at).getTime() : Infinity;
    if (!r || expiresAt <= Date.now()) throw unauthorized('Invalid or expired credentials');
    const principal: Principal = { userId: r.user_id, organizationId: r.organization_id, role: builtInRole(r.role), grants: grantsOf(r), via, credentialId: r.id };
    // Never past the credential's own expiry.
    this.#cache.set(cacheKey, { principal, until: Math.min(Date.now() + CACHE_TTL, expiresAt) });
    if (this.#cache.size > 5000) this.#cache.delete(this.#cache.keys().next().value!);
    return principal;
  }

  /**
   * A session for e-mail and password, or a pending login when two-factor is on: its `id` is then
   * an opaque token of this login (5 minutes), which verifyLogin2FA takes back with the code.
   * Failures count against the account and the client address (429 past a few).
   */
  async login(email: string, password: string, address = 'unknown'): Promise<SignedIn> {
    const account = `login:${email.trim().toLowerCase()}`;
    const from = `address:${address}`;
    this.#guard.check([account, from]);
    const em = this.em();
    const user = await em.findOne(User, { email: email.trim().toLowerCase() });
    // Same answer for an unknown e-mail and a wrong password.
    if (!user || !(await verifyPassword(password, user.passwordHash))) {
      this.#guard.fail([
        [account, LOGIN_LIMITS.account],
        [from, LOGIN_LIMITS.address],
      ]);
      throw unauthorized('Invalid e-mail or password');
    }
    this.#guard.clear(account);
    // A plugin may refuse password logins (single sign-on enforced): it throws its own error.
    await optionalService(this.deps as Cradle, 'passwordLoginPolicy')?.check(user.id);
    if (user.twoFactorEnabled) return this.signIn(user.id, 'pending2fa');
    return this.signIn(user.id, 'session');
  }

  /** The second step of a login with two-factor on: the pending login's token and a current code make a session. Codes are limited per account. */
  async verifyLogin2FA(pendingToken: string, pin: string, address = 'unknown'): Promise<SignedIn> {
    const from = `address:${address}`;
    this.#guard.check([from]);
    const em = this.em();
    const pending = await em.findOne(Session, { tokenHash: hashToken(pendingToken), kind: 'pending2fa', expiresAt: { $gt: new Date() } });
    if (!pending) {
      this.#guard.fail([[from, LOGIN_LIMITS.address]]);
      throw unauthorized('No pending two-factor login with this id; log in with the password first');
    }
    const account = `2fa:${pending.userId}`;
    this.#guard.check([account]);
    const user = await em.findOneOrFail(User, { id: pending.userId });
    // A recovery code stands in for the authenticator, once.
    const remaining = user.twoFactorEnabled && isRecoveryCode(pin) ? spendRecoveryCode(user.twoFactorRecovery ?? null, pin) : null;
    if (remaining !== null) {
      this.#guard.clear(account);
      user.twoFactorRecovery = remaining;
      em.remove(pending);
      await em.flush();
      return this.signIn(user.id, 'session');
    }
    const step = user.twoFactorEnabled && user.twoFactorSecret ? await totpStep(this.deps.secrets.decrypt(user.twoFactorSecret), pin, this.deps.clock.now()) : null;
    // A code already used to sign in (or an older one) is refused, even inside its 30 s window.
    if (step === null || (user.twoFactorLastStep != null && step <= user.twoFactorLastStep)) {
      pending.attempts += 1;
      if (pending.attempts >= MAX_2FA_ATTEMPTS) em.remove(pending);
      await em.flush();
      this.#guard.fail([[account, LOGIN_LIMITS.twoFactor]]);
      throw unauthorized('Invalid two-factor code');
    }
    this.#guard.clear(account);
    user.twoFactorLastStep = step;
    em.remove(pending);
    await em.flush();
    return this.signIn(user.id, 'session');
  }

  /** When the session of this call was opened (null for an API key or a long-lived token): some changes need a recent login. */
  async loginAge(principal: Principal): Promise<number | null> {
    if (principal.via !== 'session') return null;
    const session = await this.em().findOne(Session, { id: principal.credentialId, kind: 'session' });
    return session ? Date.now() - session.createdAt.getTime() : null;
  }

  /** A new credential of `kind` for a user, acting in `organizationId` (else its default or first organization). */
  async signIn(userId: string, kind: 'session' | 'token' | 'pending2fa', organizationId?: string): Promise<SignedIn> {
    const em = this.em();
    const user = await em.findOneOrFail(User, { id: userId });
    const orgId = organizationId ?? (await this.#activeOrganization(em, user));
    const token = newToken();
    const ttl = kind === 'session' ? SESSION_TTL : kind === 'pending2fa' ? PENDING_2FA_TTL : null;
    em.create(Session, { id: newId(), tokenHash: hashToken(token), userId, organizationId: orgId, kind, attempts: 0, expiresAt: ttl ? new Date(Date.now() + ttl) : null, createdAt: new Date() });
    await em.flush();
    const view = await authUserView(this.em(), userId, orgId);
    // A pending login answers its own token as `id`: the second step proves the first.
    return kind === 'pending2fa'
      ? { token: null, is2FAEnabled: true, id: token, organizationId: orgId, user: view }
      : { token, is2FAEnabled: user.twoFactorEnabled, id: userId, organizationId: orgId, user: view };
  }

  async #activeOrganization(em: EntityManager, user: UserRow): Promise<string | null> {
    if (user.defaultOrganizationId && (await em.count(Member, { userId: user.id, organizationId: user.defaultOrganizationId }))) return user.defaultOrganizationId;
    const first = await em.findOne(Member, { userId: user.id }, { orderBy: { createdAt: 'asc' } });
    return first?.organizationId ?? null;
  }

  /** A long-lived bearer token for scripts (older auth.generateToken / user.generateToken). */
  async generateToken(principal: Principal): Promise<string> {
    const signed = await this.signIn(principal.userId, 'token', principal.organizationId);
    return signed.token!;
  }

  /** Revokes the session of this call (an API key stays: it is deleted on its own). */
  async logout(principal: Principal): Promise<void> {
    if (principal.via === 'session') await this.em().nativeDelete(Session, { id: principal.credentialId });
    this.invalidate();
  }

  /** Deletes expired sessions and pending logins (run by a repeating job). */
  async purgeExpired(): Promise<number> {
    return this.em().nativeDelete(Session, { expiresAt: { $lt: new Date() } });
  }
}

/** A seam a plugin fills: whether a user may log in with a password (throws when not). */
export interface PasswordLoginPolicy {
  check(userId: string): Promise<void>;
}

declare module '../container.ts' {
  interface Cradle {
    /** The credential check and the sessions a login opens. */
    sessions: SessionService;
    /** Refuses password logins a plugin rules out (the sso plugin's enforceSSO); absent: every password login is taken. */
    passwordLoginPolicy: PasswordLoginPolicy;
  }
}
