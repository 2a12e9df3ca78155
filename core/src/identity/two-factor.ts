// Two-factor login: an account's TOTP secret, stored sealed, and the check of a code.
import { randomInt } from 'node:crypto';
import { badRequest, invalidField } from '../errors.ts';
import { hashToken } from '../crypto.ts';
import type { Principal } from '../procedure.ts';
import { User } from './entities.ts';
import { IdentityStore } from './shared.ts';

export class TwoFactorService extends IdentityStore<'secrets'> {
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
    if (!(await checkTotp(secret, pin))) throw badRequest('Invalid two-factor code', [{ path: ['pin'], message: 'pin: does not match the secret' }]);
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

/** Two-factor codes are rare: the TOTP library is loaded on first use, not at boot. */
const otp = () => import('otpauth');

const PERIOD = 30;
const RECOVERY_CODES = 10;
/** A recovery code is 10 digits; a TOTP code 6. */
export const isRecoveryCode = (pin: string) => /^[0-9]{10}$/.test(pin.replace(/\s/g, ''));

/** Uses up a recovery code: answers the remaining hashes (JSON) when `pin` is one of `stored`, else null. */
export function spendRecoveryCode(stored: string | null, pin: string): string | null {
  const hashes = stored ? (JSON.parse(stored) as string[]) : [];
  const hash = hashToken(pin.replace(/\s/g, ''));
  return hashes.includes(hash) ? JSON.stringify(hashes.filter(h => h !== hash)) : null;
}

/** The time step the code belongs to (now ± one step), or null when it matches none. */
export async function totpStep(base32: string, pin: string): Promise<number | null> {
  const OTPAuth = await otp();
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(base32), digits: 6, period: PERIOD, algorithm: 'SHA1' });
  const now = Date.now();
  const delta = totp.validate({ token: pin.trim(), window: 1, timestamp: now });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD) + delta;
}

async function checkTotp(base32: string, pin: string): Promise<boolean> {
  return (await totpStep(base32, pin)) !== null;
}
