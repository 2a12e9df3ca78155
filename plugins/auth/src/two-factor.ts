// Two-factor login turned on and off: an account's TOTP secret, stored sealed, and its one-time
// recovery codes, stored hashed. The check at login is the kernel's (sessions).
import { randomInt } from 'node:crypto';
import { IdentityStore, User, badRequest, hashToken, invalidField, totpStep, type Principal } from '@berth/core';

const RECOVERY_CODES = 10;
/** Two-factor codes are rare: the TOTP library is loaded on first use, not at boot. */
const otp = () => import('otpauth');

export class TwoFactorService extends IdentityStore<'secrets' | 'clock'> {
  /** A fresh secret for `email`'s authenticator; nothing changes until verify2FASetup confirms it. */
  async generate2FASecret(principal: Principal, email: string): Promise<{ secret: string; uri: string; qrCodeUrl: string }> {
    const OTPAuth = await otp();
    const secret = new OTPAuth.Secret({ size: 20 });
    const totp = new OTPAuth.TOTP({ issuer: 'Berth', label: email, secret });
    void principal;
    const uri = totp.toString();
    return { secret: secret.base32, uri, qrCodeUrl: uri };
  }

  /** Turns two-factor login on with `secret`, once `pin` shows the authenticator holds it. */
  async verify2FASetup(userId: string, secret: string, pin: string): Promise<void> {
    if (!/^[A-Z2-7]+=*$/.test(secret)) throw invalidField('secret', 'must be a base32 TOTP secret');
    if ((await totpStep(secret, pin, this.deps.clock.now())) === null) throw badRequest('Invalid two-factor code', [{ path: ['pin'], message: 'pin: does not match the secret' }]);
    const em = this.em();
    const user = await em.findOneOrFail(User, { id: userId });
    user.twoFactorSecret = this.deps.secrets.encrypt(secret);
    user.twoFactorEnabled = true;
    user.twoFactorRecovery = null; // codes of an earlier secret do not carry over
    await em.flush();
  }

  /** Ten new one-time recovery codes (10 digits each) for a login without the authenticator; the earlier ones stop working. Shown once, stored hashed. */
  async generateRecoveryCodes(userId: string): Promise<string[]> {
    const em = this.em();
    const user = await em.findOneOrFail(User, { id: userId });
    if (!user.twoFactorEnabled) throw badRequest('Two-factor login is off: turn it on first (verify2FASetup)');
    const codes = Array.from({ length: RECOVERY_CODES }, () => String(randomInt(0, 10 ** 10)).padStart(10, '0'));
    user.twoFactorRecovery = JSON.stringify(codes.map(hashToken));
    await em.flush();
    return codes;
  }

  /** Turns two-factor login off and forgets the secret. */
  async disable2FA(userId: string): Promise<void> {
    const em = this.em();
    const user = await em.findOneOrFail(User, { id: userId });
    user.twoFactorSecret = null;
    user.twoFactorEnabled = false;
    user.twoFactorRecovery = null;
    await em.flush();
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** TOTP secrets and recovery codes of accounts; from the auth plugin. */
    twoFactor: TwoFactorService;
  }
}
