// A directory per destination below one root: an object is a file, written beside its final
// name and renamed once complete, so a failed upload never leaves a file that looks whole.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { StorageError, type BackupStorage, type BackupStore, type StorageLocation, type StoredObject } from '@berth/core';

const DIRECTORY = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,62}$/;
const PARTIAL = '.partial-';

/** A key's segments, each a plain name: no "..", no absolute path, no empty segment. */
function segments(key: string): string[] {
  const parts = key.split('/');
  if (!key || parts.some(p => !p || p === '.' || p === '..' || p.startsWith(PARTIAL) || p.includes('\0'))) {
    throw new StorageError('write', `local storage: "${key}" is not a valid object key`);
  }
  return parts;
}

class LocalStore implements BackupStore {
  readonly #dir: string;
  constructor(dir: string) {
    this.#dir = dir;
  }

  #file(key: string): string {
    return path.join(this.#dir, ...segments(key));
  }

  async put(key: string, body: Readable, options: { signal?: AbortSignal } = {}): Promise<{ size: number }> {
    const file = this.#file(key);
    try {
      await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    } catch (e) {
      throw new StorageError('bucket', `local storage: cannot make the directory ${path.dirname(file)}: ${(e as Error).message}`, { cause: e });
    }
    const partial = path.join(path.dirname(file), `${PARTIAL}${randomBytes(6).toString('hex')}`);
    let size = 0;
    const count = new Transform({
      transform(chunk: Buffer, _e, done) {
        size += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await pipeline(body, count, createWriteStream(partial, { mode: 0o600 }), { signal: options.signal });
      await rename(partial, file);
    } catch (e) {
      await rm(partial, { force: true });
      if (e instanceof StorageError) throw e;
      throw new StorageError('write', `local storage: writing ${key} failed: ${(e as Error).message}`, { cause: e });
    }
    return { size };
  }

  async get(key: string): Promise<Readable> {
    const file = this.#file(key);
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) throw new StorageError('missing', `local storage: there is no file ${key}`);
    return createReadStream(file);
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const out: StoredObject[] = [];
    const walk = async (dir: string, rel: string): Promise<void> => {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        if (e.name.startsWith(PARTIAL)) continue;
        const key = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) await walk(path.join(dir, e.name), key);
        else if (e.isFile() && key.startsWith(prefix)) {
          const info = await stat(path.join(dir, e.name));
          out.push({ key, size: info.size, lastModified: info.mtime });
        }
      }
    };
    await walk(this.#dir, '');
    return out;
  }

  async remove(key: string): Promise<void> {
    try {
      await rm(this.#file(key), { force: true });
    } catch (e) {
      throw new StorageError('delete', `local storage: deleting ${key} failed: ${(e as Error).message}`, { cause: e });
    }
  }
}

export class LocalStorage implements BackupStorage {
  readonly id = 'local';
  readonly label = 'a directory on this host';
  readonly servesOtherProviders = false;
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  validate(location: StorageLocation) {
    if (!DIRECTORY.test(location.bucket)) return { field: 'bucket' as const, message: `must be a directory name below the backup root (${DIRECTORY})` };
    return null;
  }

  open(location: StorageLocation): BackupStore {
    const problem = this.validate(location);
    if (problem) throw new StorageError('bucket', `local storage: bucket ${problem.message}`);
    // The destination's directory is made by the first write.
    return new LocalStore(path.join(this.root, location.bucket));
  }
}
