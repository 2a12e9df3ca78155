// The archive of Berth's own data: its database (pg_dump, plain SQL with --clean) and the data
// directory's keys, as one stream encrypted with the operator's passphrase. Framing: per entry a
// name line, then chunks of [u32 length][bytes] ended by a zero-length chunk.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PoolConfig } from 'pg';
import { encryptStream } from '../stream-encryption.ts';
import { runPgTool } from './pg-tools.ts';

/** The files of the data directory that are keys (secret.key seals every secret at rest). */
export const KEY_FILES = ['secret.key'] as const;
export const DATABASE_ENTRY = 'database.sql';

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
/** A transform that frames what flows through as the chunks of one entry. */
function frame(name: string): Transform {
  let opened = false;
  const head = () => (opened ? Buffer.alloc(0) : ((opened = true), Buffer.from(`${name}\n`)));
  return new Transform({
    transform(chunk: Buffer, _e, done) {
      done(null, Buffer.concat([head(), u32(chunk.length), chunk]));
    },
    flush(done) {
      done(null, Buffer.concat([head(), u32(0)]));
    },
  });
}

/** Writes the encrypted archive of the database at `pool` and the keys of `dataDir` to `sink`. */
export async function writeOwnDataArchive(pool: PoolConfig, dataDir: string, passphrase: string, sink: Writable): Promise<void> {
  const enc = encryptStream(passphrase);
  const done = pipeline(enc, sink);
  const dump = frame(DATABASE_ENTRY);
  dump.pipe(enc, { end: false });
  const ended = new Promise<void>((resolve, reject) => {
    dump.once('end', resolve);
    dump.once('error', reject);
  });
  await runPgTool('pg_dump', ['--clean', '--if-exists', '--no-owner', '--no-privileges'], pool, { stdout: dump });
  dump.end();
  await ended;
  for (const file of KEY_FILES) {
    const full = path.join(dataDir, file);
    if (!existsSync(full)) continue;
    const f = frame(file);
    f.pipe(enc, { end: false });
    const end = new Promise<void>(resolve => f.once('end', resolve));
    f.end(readFileSync(full));
    await end;
  }
  enc.end();
  await done;
}

/** The entries of a decrypted archive. */
export function readEntries(plain: Buffer): Map<string, Buffer> {
  const entries = new Map<string, Buffer>();
  let at = 0;
  while (at < plain.length) {
    const nl = plain.indexOf(0x0a, at);
    if (nl < 0) throw new Error('the archive is damaged (an entry without a name)');
    const name = plain.subarray(at, nl).toString('utf8');
    at = nl + 1;
    const parts: Buffer[] = [];
    for (;;) {
      if (at + 4 > plain.length) throw new Error(`the archive is damaged (entry ${name} is cut short)`);
      const n = plain.readUInt32BE(at);
      at += 4;
      if (n === 0) break;
      parts.push(plain.subarray(at, at + n));
      at += n;
    }
    entries.set(name, Buffer.concat(parts));
  }
  return entries;
}
