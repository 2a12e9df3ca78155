// Source type "drop": the last zip archive uploaded for a workload (application.dropDeployment),
// checked entry by entry and unpacked (checked-unzip.ts), kept under <root>/<kind>/<id>/code with
// what was received in archive.json. A deploy, and any redeploy after it, builds a copy of what is
// kept, as the git source's checkout is built. An upload is unpacked beside the kept one and takes
// its place only once whole: a refused or failed upload leaves the one before. The swap is two
// renames (the kept one aside to <id>.old-*, the upload in); a process that dies between them
// leaves the kept one aside, and the next use of the workload's archive puts it back and sweeps
// what a dead process left (its .upload-* and .old-* directories).
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { cp, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { badRequest, type CheckoutSource, type SourceOwner, type SourceProvider, type SourceRequest, type SourceUpload } from '@berth/core';
import { ArchiveRefused, unzipChecked, type UnzipLimits } from './checked-unzip.ts';

export interface DropSourceOptions {
  /** Where the archives are kept (dataDir/sources/drop). */
  root: string;
  limits: UnzipLimits;
}

/** What archive.json keeps of an upload. */
interface Received {
  sha256: string;
  entries: number;
  bytes: number;
  receivedAt: string;
}

/** Kinds and ids name directories: record ids and kind names only. */
const SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;

export class DropSource implements SourceProvider {
  readonly id = 'drop';
  readonly #root: string;
  readonly #limits: UnzipLimits;
  /** Per workload, the last of its uploads, copies and removals: one at a time, in order. */
  readonly #queues = new Map<string, Promise<void>>();
  /** Uploads being unpacked by this process now: the sweep leaves them. */
  readonly #staging = new Set<string>();

  constructor(o: DropSourceOptions) {
    this.#root = o.root;
    this.#limits = o.limits;
  }

  async receive({ owner, file, field, signal }: SourceUpload): Promise<{ revision: string }> {
    const dir = this.#dirOf(owner);
    // A sibling of the kept directory, so that taking its place is a rename on one file system.
    const staging = `${dir}${UPLOAD}${randomUUID()}`;
    this.#staging.add(staging);
    try {
      await mkdir(path.join(staging, 'code'), { recursive: true, mode: 0o700 });
      const { entries, bytes } = await unzipChecked(file, path.join(staging, 'code'), this.#limits, signal ?? new AbortController().signal);
      if (entries === 0) throw new ArchiveRefused('holds no file');
      const received: Received = { sha256: await sha256Of(file), entries, bytes, receivedAt: new Date().toISOString() };
      await writeFile(path.join(staging, 'archive.json'), JSON.stringify(received));
      await this.#inTurn(owner, async () => {
        await this.#recover(dir);
        await replace(dir, staging);
      });
      return { revision: revisionOf(received) };
    } catch (e) {
      if (e instanceof ArchiveRefused) throw badRequest(`${field}: ${e.message}`, [{ path: [field], message: `${field}: ${e.message}` }]);
      throw e;
    } finally {
      await rm(staging, { recursive: true, force: true });
      this.#staging.delete(staging);
    }
  }

  async resolve({ fields, workDir, owner, signal }: SourceRequest): Promise<CheckoutSource> {
    signal.throwIfAborted();
    if (!owner) throw new Error('The drop source deploys what was uploaded for a workload, and none was named');
    const dir = this.#dirOf(owner);
    const revision = await this.#inTurn(owner, async () => {
      await this.#recover(dir);
      const text = await readFile(path.join(dir, 'archive.json'), 'utf8').catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') throw new Error('No archive has been uploaded for it: upload a zip with application.dropDeployment');
        throw e;
      });
      await cp(path.join(dir, 'code'), workDir, { recursive: true, verbatimSymlinks: true });
      return revisionOf(JSON.parse(text) as Received);
    });
    signal.throwIfAborted();
    return { revision, buildPath: (fields.dropBuildPath as string | null | undefined) ?? null };
  }

  async forget(owner: SourceOwner): Promise<void> {
    const dir = this.#dirOf(owner);
    await this.#inTurn(owner, async () => {
      await this.#recover(dir);
      await rm(dir, { recursive: true, force: true });
    });
  }

  /**
   * What a process that died mid-upload left beside the workload's directory: the kept archive set
   * aside but not replaced is put back (the record still names it: the upload's change was not
   * committed), then every other .old-* and every .upload-* that no upload of this process is
   * writing is removed. Runs in the workload's turn, so no swap of this process is half done.
   */
  async #recover(dir: string): Promise<void> {
    const parent = path.dirname(dir);
    const names = await readdir(parent).catch((e: NodeJS.ErrnoException): string[] => {
      if (e.code === 'ENOENT') return [];
      throw e;
    });
    const base = path.basename(dir);
    const olds = names.filter(n => n.startsWith(`${base}${OLD}`)).map(n => path.join(parent, n));
    const uploads = names.filter(n => n.startsWith(`${base}${UPLOAD}`)).map(n => path.join(parent, n));
    if (olds.length && !names.includes(base)) await rename(olds.shift()!, dir);
    for (const leftover of [...olds, ...uploads.filter(u => !this.#staging.has(u))]) await rm(leftover, { recursive: true, force: true });
  }

  #dirOf(owner: SourceOwner): string {
    if (!SEGMENT.test(owner.kind) || !SEGMENT.test(owner.id)) throw new Error(`drop: ${JSON.stringify(owner)} is no workload a directory can be named after`);
    return path.join(this.#root, owner.kind, owner.id);
  }

  /** Runs `work` once the workload's earlier work is done: a deploy never copies a half-replaced archive. */
  async #inTurn<T>(owner: SourceOwner, work: () => Promise<T>): Promise<T> {
    const key = `${owner.kind}/${owner.id}`;
    const before = this.#queues.get(key) ?? Promise.resolve();
    const run = before.then(work);
    const settled = run.then(
      () => {},
      () => {},
    );
    this.#queues.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.#queues.get(key) === settled) this.#queues.delete(key);
    }
  }
}

/** The suffixes of an upload being unpacked and of a kept archive set aside, after the workload's directory name (ids hold no '.'). */
const UPLOAD = '.upload-';
const OLD = '.old-';

/** Puts the staged upload in the kept one's place; the kept one comes back if that fails (or, after a crash, at the next #recover). */
async function replace(dir: string, staging: string): Promise<void> {
  await mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
  const old = `${dir}${OLD}${randomUUID()}`;
  const had = await rename(dir, old).then(
    () => true,
    (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return false;
      throw e;
    },
  );
  try {
    await rename(staging, dir);
  } catch (e) {
    if (had) await rename(old, dir);
    throw e;
  }
  if (had) await rm(old, { recursive: true, force: true });
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

const revisionOf = (r: Received) => `the archive sha256:${r.sha256.slice(0, 12)} (${r.entries} entries, ${r.bytes} bytes) uploaded ${r.receivedAt}`;
