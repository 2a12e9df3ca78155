// The first admin of a fresh instance: bootstrap authentication, the kernel's (DESIGN.md). Until an
// admin exists, anyone who reaches the API could claim the instance; so a fresh instance writes a
// one-time setup token to a file of its data directory at start (mode 0600, readable by whoever runs
// Berth) and logs only that file's path. auth.createAdmin (the auth plugin) takes the token, or
// needs none from a caller on this machine's loopback whose request carries no forwarding header
// (the README's curl session, isLocalCaller; a reverse proxy on the same machine adds such headers,
// so it is not taken for a local caller); it and `berth admin create` spend it on the first admin.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const setupTokenFile = (dataDir: string) => path.join(dataDir, 'setup-token');

/** Writes the token file when there is none (a fresh instance); answers its path. */
export function ensureSetupToken(dataDir: string): string {
  const file = setupTokenFile(dataDir);
  mkdirSync(dataDir, { recursive: true });
  if (!existsSync(file)) writeFileSync(file, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  return file;
}

/** True when `token` is the instance's setup token. */
export function isSetupToken(dataDir: string, token: string | undefined): boolean {
  if (!token) return false;
  let expected: Buffer;
  try {
    expected = Buffer.from(readFileSync(setupTokenFile(dataDir), 'utf8').trim());
  } catch {
    return false;
  }
  const given = Buffer.from(token.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The token is spent once the first admin exists. */
export const removeSetupToken = (dataDir: string) => rmSync(setupTokenFile(dataDir), { force: true });

/** At start: the token spent when an admin exists, else written (and its file logged) unless Berth runs headless (an operator command). */
export async function prepareSetupToken(o: { ownerExists: () => Promise<boolean>; dataDir: string; headless: boolean; log: (file: string) => void }): Promise<void> {
  if (await o.ownerExists()) removeSetupToken(o.dataDir);
  else if (!o.headless) o.log(ensureSetupToken(o.dataDir));
}
