// One backup file stored whole: what a producer writes goes through its framing (gzip and the
// operator's encryption; Berth's own-data archive is stored as written), a sha256 and a byte
// count into the storage's upload; then the object is read back (same checksum, decoded whole)
// before it counts. A failure anywhere removes the object: a size of
// zero, a truncated gzip or a failed upload is a failed backup, never a success.
import { createGunzip, createGzip } from 'node:zlib';
import { createHash } from 'node:crypto';
import { PassThrough, Transform, Writable, type Duplex, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BackupStore } from '@berth/core';
import { decryptStream, encryptStream } from './stream-encryption.ts';

/** Counts and hashes what flows through. */
export function measure(): Transform & { size(): number; sha256(): string } {
  const hash = createHash('sha256');
  let size = 0;
  const t = new Transform({
    transform(chunk: Buffer, _e, done) {
      size += chunk.length;
      hash.update(chunk);
      done(null, chunk);
    },
  });
  let digest: string | null = null;
  return Object.assign(t, { size: () => size, sha256: () => (digest ??= hash.digest('hex')) });
}

/** How a backup file is made from what its producer writes, and read back. */
export interface Framing {
  /** The transforms between the producer and the stored bytes (none: stored as written). */
  encode(): Duplex[];
  /** The transforms a stored object must pass, to its end and without an error, to count as whole. */
  decode(): Duplex[];
}

/** gzip, then the operator's encryption when the backup has a passphrase: database and volume files. */
export const gzipFraming = (passphrase: string | null): Framing => ({
  encode: () => (passphrase ? [createGzip(), encryptStream(passphrase)] : [createGzip()]),
  decode: () => (passphrase ? [decryptStream(passphrase), createGunzip()] : [createGunzip()]),
});

/** Reads a stored object to its end: its sha256 and size, and whether it decodes whole (for a gzip framing: one whole gzip stream). */
export async function inspectObject(body: Readable, framing: Framing): Promise<{ sha256: string; size: number }> {
  const m = measure();
  const discard = new Writable({ write: (_c, _e, done) => done() });
  const decode = framing.decode();
  await pipeline([body, m, ...decode, discard]);
  return { sha256: m.sha256(), size: m.size() };
}

/** Stores what `produce` writes (and ends) under `key`, framed; answers the stored size and sha256, or rejects saying what failed. */
export async function storeWhole(store: BackupStore, key: string, framing: Framing, produce: (sink: Writable) => Promise<void>): Promise<{ size: number; sha256: string }> {
  const encode = framing.encode();
  const m = measure();
  const body = new PassThrough();
  const sink: Writable = encode[0] ?? m;
  const compressed = pipeline([...encode, m, body]).catch((e: Error) => {
    body.destroy(e);
    throw e;
  });
  const upload = store.put(key, body);
  const results = await Promise.allSettled([produce(sink), compressed, upload]);
  const failed = results.find(r => r.status === 'rejected') as PromiseRejectedResult | undefined;
  const fail = async (message: string) => {
    await store.remove(key).catch(() => {});
    return new Error(message);
  };
  if (failed) throw await fail((failed.reason as Error).message);
  const { size } = (results[2] as PromiseFulfilledResult<{ size: number }>).value;
  const sha256 = m.sha256();
  if (size === 0 || size !== m.size()) throw await fail(`the storage holds ${size} bytes of the ${m.size()} sent`);
  const stored = await inspectObject(await store.get(key), framing).catch((e: Error) => ({ error: e }));
  if ('error' in stored || stored.sha256 !== sha256) throw await fail(`the stored file does not read back whole (${'error' in stored ? stored.error.message : 'checksum differs'})`);
  return { size, sha256 };
}
