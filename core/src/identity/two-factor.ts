// Two-factor login: an account's TOTP secret, stored sealed, and the check of a code.
import { badRequest, invalidField } from '../errors.ts';
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
    await em.flush();
  }

  /** Turns two-factor login off and forgets the secret. */
  async disable2FA(userId: string): Promise<void> {
    const em = this.em();
    const user = await em.findOneOrFail(User, { id: userId });
    user.twoFactorSecret = null;
    user.twoFactorEnabled = false;
    await em.flush();
  }
}

/** Two-factor codes are rare: the TOTP library is loaded on first use, not at boot. */
const otp = () => import('otpauth');

const PERIOD = 30;

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
