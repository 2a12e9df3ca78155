// Optional encryption of backup files with the operator's key: AES-256-GCM, streamed. A file is
// MAGIC, a random salt and IV, the ciphertext and the 16-byte tag; the key is derived from the
// operator's passphrase with scrypt and the salt. The passphrase is kept sealed in Berth's
// database, never in the destination: a bucket alone cannot be read.
import { createCipheriv, createDecipheriv, randomBytes, scryptSync, type DecipherGCM } from 'node:crypto';
import { Transform } from 'node:stream';

const MAGIC = Buffer.from('BERTHENC1\n');
const SALT = 16;
const IV = 12;
const TAG = 16;
const HEADER = MAGIC.length + SALT + IV;

const keyOf = (passphrase: string, salt: Buffer) => scryptSync(passphrase, salt, 32, { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });

export const ENCRYPTED_SUFFIX = '.enc';

/** Encrypts what flows through. */
export function encryptStream(passphrase: string): Transform {
  const salt = randomBytes(SALT);
  const iv = randomBytes(IV);
  const cipher = createCipheriv('aes-256-gcm', keyOf(passphrase, salt), iv);
  let started = false;
  return new Transform({
    transform(chunk: Buffer, _e, done) {
      const out = cipher.update(chunk);
      if (!started) {
        started = true;
        return done(null, Buffer.concat([MAGIC, salt, iv, out]));
      }
      done(null, out);
    },
    flush(done) {
      const head = started ? Buffer.alloc(0) : Buffer.concat([MAGIC, salt, iv]);
      done(null, Buffer.concat([head, cipher.final(), cipher.getAuthTag()]));
    },
  });
}

/** Decrypts what flows through; fails at the end when the key is wrong or the file was changed. */
export function decryptStream(passphrase: string): Transform {
  let pending = Buffer.alloc(0);
  let decipher: DecipherGCM | null = null;
  return new Transform({
    transform(chunk: Buffer, _e, done) {
      pending = Buffer.concat([pending, chunk]);
      if (!decipher) {
        if (pending.length < HEADER) return done();
        if (!pending.subarray(0, MAGIC.length).equals(MAGIC)) return done(new Error('not a file encrypted by Berth'));
        const salt = pending.subarray(MAGIC.length, MAGIC.length + SALT);
        const iv = pending.subarray(MAGIC.length + SALT, HEADER);
        decipher = createDecipheriv('aes-256-gcm', keyOf(passphrase, salt), iv);
        pending = pending.subarray(HEADER);
      }
      // The last TAG bytes may be the tag: hold them back until the end.
      const ready = pending.subarray(0, Math.max(0, pending.length - TAG));
      pending = pending.subarray(ready.length);
      done(null, decipher.update(ready));
    },
    flush(done) {
      if (!decipher || pending.length !== TAG) return done(new Error('the encrypted file is truncated'));
      decipher.setAuthTag(pending);
      try {
        done(null, decipher.final());
      } catch {
        done(new Error('the encryption key is wrong or the file was changed'));
      }
    },
  });
}

/** Whether a stored file's name says it is encrypted. */
export const isEncryptedKey = (key: string) => key.endsWith(ENCRYPTED_SUFFIX);
