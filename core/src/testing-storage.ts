// The conformance suite every BackupStorage provider's test calls, and a real S3-compatible
// server for tests (s3rver: the S3 REST protocol in Node, objects on disk; it checks access
// keys but not SigV4 signatures, so a wrong secret is not caught by it).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createHash, randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import type { BackupStorage, StorageLocation } from './contracts/backup-storage.ts';
import { StorageError } from './provider-errors.ts';
import type { ProviderDescriptor } from './provider.ts';
import { descriptorConformance } from './testing-conformance.ts';

export interface S3TestServer {
  endpoint: string;
  accessKey: string;
  secretAccessKey: string;
  region: string;
  close(): Promise<void>;
}

/** Starts s3rver on a free local port with the given buckets (its directory removed at teardown). */
export async function startS3TestServer(t: Test, buckets: string[]): Promise<S3TestServer> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'berth-s3-'));
  // @ts-expect-error s3rver ships no types
  const { default: S3rver } = await import('s3rver');
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: buckets.map(name => ({ name })) });
  const address = (await server.run()) as { port: number };
  const close = async () => {
    await server.close().catch(() => {});
    rmSync(directory, { recursive: true, force: true });
  };
  t.teardown(close);
  return { endpoint: `http://127.0.0.1:${address.port}`, accessKey: 'S3RVER', secretAccessKey: 'S3RVER', region: 'us-east-1', close };
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
async function readAll(r: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(Buffer.from(c as Buffer));
  return Buffer.concat(parts);
}

export interface StorageConformanceOptions {
  /** The provider's options in the config (defaults apply). */
  options?: Record<string, unknown>;
  /** A location that works. */
  location: StorageLocation;
  /** Locations that must fail, with the part testConnection would name. */
  failing?: { location: StorageLocation; failure: StorageError['failure'] }[];
  /** Bytes of the large object (spans several parts for a multipart provider). */
  largeBytes?: number;
}

/** The descriptor, then the store: put (streamed, sized), get, list by prefix, remove; a failing source stores nothing; failures are named. */
export function storageConformance(t: Test, descriptor: ProviderDescriptor, o: StorageConformanceOptions): void {
  t.test(`storage provider ${descriptor.id}: conformance`, async t => {
    const storage = await descriptorConformance<BackupStorage>(t, descriptor, 'storage', o.options);
    t.equal(storage.validate(o.location), null, 'the working location is valid');
    const store = storage.open(o.location);
    const prefix = `conformance-${randomBytes(4).toString('hex')}/`;

    const small = Buffer.from('a small object\n');
    t.same(await store.put(`${prefix}small.txt`, Readable.from([small])), { size: small.length }, 'put answers the bytes stored');
    t.same(await readAll(await store.get(`${prefix}small.txt`)), small, 'get reads them back');

    const large = randomBytes(o.largeBytes ?? 12 * 1024 * 1024);
    const chunks = function* () {
      for (let i = 0; i < large.length; i += 256 * 1024) yield large.subarray(i, i + 256 * 1024);
    };
    t.same(await store.put(`${prefix}nested/large.bin`, Readable.from(chunks())), { size: large.length }, 'a large streamed object is stored whole');
    t.equal(sha(await readAll(await store.get(`${prefix}nested/large.bin`))), sha(large), 'and reads back byte for byte');

    const listed = (await store.list(prefix)).sort((a, b) => a.key.localeCompare(b.key));
    t.same(
      listed.map(l => [l.key, l.size]),
      [
        [`${prefix}nested/large.bin`, large.length],
        [`${prefix}small.txt`, small.length],
      ],
      'list answers the keys below the prefix with their sizes',
    );
    t.same(await store.list(`${prefix}nothing-`), [], 'a prefix with nothing below it lists nothing');

    const broken = new Readable({ read() {} });
    broken.push(randomBytes(64 * 1024));
    setTimeout(() => broken.destroy(new Error('the dump failed')), 50);
    await t.rejects(store.put(`${prefix}broken.bin`, broken), { message: /the dump failed/ }, 'a source that fails fails the put');
    t.notOk(
      (await store.list(prefix)).some(l => l.key.endsWith('broken.bin')),
      'and leaves no object behind',
    );

    await store.remove(`${prefix}small.txt`);
    await store.remove(`${prefix}small.txt`);
    t.same(
      (await store.list(prefix)).map(l => l.key),
      [`${prefix}nested/large.bin`],
      'remove deletes (twice is no error)',
    );
    await t.rejects(store.get(`${prefix}small.txt`), { name: 'StorageError', failure: 'missing' } as never, 'a missing object is a StorageError "missing"');
    await store.remove(`${prefix}nested/large.bin`);

    for (const f of o.failing ?? []) {
      const err = await storage
        .open(f.location)
        .put(`${prefix}probe`, Readable.from([small]))
        .then(
          () => null,
          (e: unknown) => e,
        );
      t.ok(err instanceof StorageError, `a bad ${f.failure} fails with a StorageError`);
      t.equal((err as StorageError).failure, f.failure, `naming the ${f.failure}: ${(err as Error).message}`);
      t.match((err as Error).message, new RegExp(`^${descriptor.id} storage:`), 'the message starts with the provider');
    }
  });
}
