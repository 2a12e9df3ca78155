// The first admin of a fresh instance (the auth plugin's: it writes the token at start and spends it
// when auth.createAdmin or `berth admin create` makes the first admin). Until one exists, anyone who reaches the API could
// claim it; so a fresh instance writes a one-time setup token to a file of its data directory
// (mode 0600, readable by whoever runs Berth) and logs only that file's path. auth.createAdmin
// takes the token, or needs none from a caller on this machine's loopback whose request
// carries no forwarding header (the README's curl session, isLocalCaller of @berth/core; a reverse proxy on the same machine
// adds such headers, so it is not taken for a local caller).
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
