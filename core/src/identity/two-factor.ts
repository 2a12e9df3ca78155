// The two-factor step of a login: a TOTP code or a one-time recovery code checked against what
// the account holds. Turning two-factor login on and off is the auth plugin's.
import { hashToken } from '../crypto.ts';

/** Two-factor codes are rare: the TOTP library is loaded on first use, not at boot. */
const otp = () => import('otpauth');

const PERIOD = 30;
/** A recovery code is 10 digits; a TOTP code 6. */
export const isRecoveryCode = (pin: string) => /^[0-9]{10}$/.test(pin.replace(/\s/g, ''));

/** Uses up a recovery code: answers the remaining hashes (JSON) when `pin` is one of `stored`, else null. */
export function spendRecoveryCode(stored: string | null, pin: string): string | null {
  const hashes = stored ? (JSON.parse(stored) as string[]) : [];
  const hash = hashToken(pin.replace(/\s/g, ''));
  return hashes.includes(hash) ? JSON.stringify(hashes.filter(h => h !== hash)) : null;
}

/** The time step the code belongs to (`now` ± one step; `now` from the cradle's clock), or null when it matches none. */
export async function totpStep(base32: string, pin: string, now: number): Promise<number | null> {
  const OTPAuth = await otp();
  const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(base32), digits: 6, period: PERIOD, algorithm: 'SHA1' });
  const delta = totp.validate({ token: pin.trim(), window: 1, timestamp: now });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD) + delta;
}
