// Identifiers, hashes of credentials, password hashing and encryption of secrets at rest.
import { createCipheriv, createDecipheriv, createHash, randomBytes, scrypt, timingSafeEqual, hkdfSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-';

/** A random URL-safe identifier (21 characters, ~126 bits), like the ids the peer hands out. */
export function newId(size = 21): string {
  const bytes = randomBytes(size);
  let id = '';
  for (let i = 0; i < size; i++) id += ALPHABET[bytes[i]! & 63];
  return id;
}

/** A bearer token or API key in plain text; only its hash is stored. */
export const newToken = (bytes = 32) => randomBytes(bytes).toString('base64url');

/** Credentials (API keys, session tokens) are high-entropy, so one SHA-256 is enough to store them. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, 32, SCRYPT);
  return `scrypt$${salt.toString('base64')}$${key.toString('base64')}`;
}
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const [kind, salt, key] = (stored ?? '').split('$');
  if (kind !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, SCRYPT);
  return timingSafeEqual(expected, actual);
}

/**
 * Encrypts and decrypts secrets stored in the database (AES-256-GCM). The key is derived
 * from the operator's secret, or from dataDir/secret.key, generated on first start.
 */
export class SecretBox {
  readonly #key: Buffer;
  readonly #secret: string;
  constructor(secret: string) {
    this.#secret = secret;
    this.#key = Buffer.from(hkdfSync('sha256', secret, 'berth', 'secrets-at-rest', 32));
  }
  /**
   * A key of its own for another purpose (an HMAC, say), derived from the same secret with the
   * purpose as HKDF's info: never the encryption key, and one purpose's key tells nothing of another's.
   */
  deriveKey(purpose: string): Buffer {
    if (purpose === 'secrets-at-rest') throw new Error('the encryption key is not handed out');
    return Buffer.from(hkdfSync('sha256', this.#secret, 'berth', purpose, 32));
  }
  static fromConfig(secret: string | undefined, dataDir: string): SecretBox {
    if (secret) return new SecretBox(secret);
    const file = path.join(dataDir, 'secret.key');
    if (!existsSync(file)) {
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(file, randomBytes(48).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
    }
    return new SecretBox(readFileSync(file, 'utf8').trim());
  }
  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1:${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${data.toString('base64')}`;
  }
  /** A text column that may hold secrets (env): sealed, except the empty text, which stays empty. */
  sealText(plain: string): string {
    return plain === '' ? '' : this.encrypt(plain);
  }
  /** The plain text of a column sealText wrote; text stored before it was sealed (no "v1:" prefix) reads as it is. */
  openText(stored: string): string {
    return stored.startsWith('v1:') ? this.decrypt(stored) : stored;
  }
  /** True when a stored text is sealed (or empty: nothing to seal). */
  static isSealedText(stored: string): boolean {
    return stored === '' || stored.startsWith('v1:');
  }
  decrypt(sealed: string): string {
    const [v, iv, tag, data] = sealed.split(':');
    if (v !== 'v1' || !iv || !tag || data === undefined) throw new Error('SecretBox: not a sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  }
}
