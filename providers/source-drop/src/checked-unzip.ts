// The checked unzip of an uploaded archive: every entry is judged before a byte is written (its
// name, its type, the count and the declared sizes), then extracted into an empty directory while
// the bytes actually inflated are counted. Whatever the archive says is untrusted: a name that is
// absolute or climbs out, a symbolic link, a device, an encrypted entry, too many entries or too
// many bytes refuses the whole archive. yauzl (loaded on the first archive, never at boot) reads
// the zip format and checks each entry's declared size against the bytes it inflates.
import { createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Entry, ZipFile } from 'yauzl';

export interface UnzipLimits {
  /** The most entries (files and directories) an archive may hold. */
  maxEntries: number;
  /** The most bytes its files may hold once inflated (zip bombs). */
  maxUnpackedBytes: number;
}

/** An archive refused for what it holds; the message says what, for the uploader. */
export class ArchiveRefused extends Error {
  override readonly name = 'ArchiveRefused';
}

/** The type bits of a Unix mode (the high half of an entry's external attributes, when made on Unix). */
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
/** Files up to this size are inflated into memory and written at once. */
const SMALL = 1024 * 1024;
/** "Made by" hosts whose external attributes carry a Unix mode (Unix, macOS). */
const UNIX_HOSTS = new Set([3, 19]);

/** What the peer leaves out of an archive too: the resource forks the macOS Finder adds. */
const finderLitter = (name: string) => name === '__MACOSX' || name.startsWith('__MACOSX/');

interface Planned {
  entry: Entry;
  /** Its path inside the target, '/'-separated, without a trailing '/'. */
  name: string;
  directory: boolean;
  executable: boolean;
}

/** Extracts `archive` into `target` (an empty directory); answers the entries and bytes written. */
export async function unzipChecked(archive: string, target: string, limits: UnzipLimits, signal: AbortSignal): Promise<{ entries: number; bytes: number }> {
  target = path.resolve(target);
  const yauzl = await import('yauzl');
  let zip: ZipFile;
  try {
    // strictFileNames: a backslash in a name is refused, never taken for a separator.
    zip = await yauzl.openPromise(archive, { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true, strictFileNames: true });
  } catch (e) {
    throw new ArchiveRefused(`not a zip archive (${(e as Error).message})`);
  }
  try {
    // The count the archive's end record declares, judged before any entry is read.
    if (zip.entryCount > limits.maxEntries) throw new ArchiveRefused(`holds ${zip.entryCount} entries, more than the ${limits.maxEntries} an archive may have`);
    const planned = await plan(zip, target, limits);
    const root = singleRoot(planned);
    const inflated = { bytes: 0 };
    const made = new Set<string>();
    for (const p of planned) {
      signal.throwIfAborted();
      const name = root === null ? p.name : p.name === root ? '' : p.name.startsWith(`${root}/`) ? p.name.slice(root.length + 1) : p.name;
      if (!name) continue;
      const dest = path.join(target, ...name.split('/'));
      try {
        const parent = p.directory ? dest : path.dirname(dest);
        if (!made.has(parent)) await mkdir(parent, { recursive: true, mode: 0o755 });
        made.add(parent);
        if (p.directory) continue;
        const read = await zip.openReadStreamPromise(p.entry);
        // 'wx': a name the archive holds twice is refused, never written over.
        const [flag, mode] = ['wx', p.executable ? 0o755 : 0o644] as const;
        if (p.entry.uncompressedSize <= SMALL) {
          // A small file (most of a site's) in one write: a write stream per file costs more than its bytes.
          const chunks: Buffer[] = [];
          const collect = async (inflating: AsyncIterable<Buffer>) => {
            for await (const chunk of inflating) chunks.push(chunk);
          };
          await pipeline(read, counter(inflated, limits.maxUnpackedBytes), collect, { signal });
          await writeFile(dest, Buffer.concat(chunks), { flag, mode, signal });
        } else await pipeline(read, counter(inflated, limits.maxUnpackedBytes), createWriteStream(dest, { flags: flag, mode }), { signal });
      } catch (e) {
        throw refusal(e, p.name);
      }
    }
    return { entries: planned.length, bytes: inflated.bytes };
  } finally {
    zip.close();
  }
}

/** Reads and judges every entry's header; nothing is written yet. */
async function plan(zip: ZipFile, target: string, limits: UnzipLimits): Promise<Planned[]> {
  const out: Planned[] = [];
  const seen = new Set<string>();
  let declared = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      const raw = entry.fileName;
      if (finderLitter(raw)) continue;
      if (out.length >= limits.maxEntries) throw new ArchiveRefused(`holds more than the ${limits.maxEntries} entries an archive may have`);
      // yauzl has refused absolute names, drive letters, backslashes and ".." already; judged again here, by the same rules as the target's path.
      if (/[\u0000-\u001f\u007f]/.test(raw)) throw new ArchiveRefused(`the entry ${JSON.stringify(raw)} has a control character in its name`);
      const name = raw.replace(/\/+$/, '');
      if (!name || raw.startsWith('/') || name.split('/').some(s => s === '..' || s === '.' || s === '')) throw new ArchiveRefused(`the entry ${JSON.stringify(raw)} is not a plain relative path`);
      const dest = path.resolve(target, name);
      if (!dest.startsWith(target + path.sep)) throw new ArchiveRefused(`the entry ${JSON.stringify(raw)} leads outside the archive's directory`);
      const mode = UNIX_HOSTS.has(entry.versionMadeBy >> 8) ? entry.externalFileAttributes >>> 16 : 0;
      const type = mode & S_IFMT;
      const directory = raw.endsWith('/') || type === S_IFDIR;
      // Only files and directories: a symbolic link could point anywhere on this machine, and a device or FIFO is no source.
      if (type !== 0 && type !== S_IFREG && type !== S_IFDIR)
        throw new ArchiveRefused(`the entry ${JSON.stringify(raw)} is a ${type === 0o120000 ? 'symbolic link' : 'special file'}: an archive may hold files and directories only`);
      if (entry.isEncrypted()) throw new ArchiveRefused(`the entry ${JSON.stringify(raw)} is encrypted`);
      if (!entry.canDecodeFileData()) throw new ArchiveRefused(`the entry ${JSON.stringify(raw)} uses compression method ${entry.compressionMethod}, which is not supported`);
      if (!directory && seen.has(name)) throw new ArchiveRefused(`the archive holds ${JSON.stringify(name)} twice`);
      seen.add(name);
      declared += directory ? 0 : entry.uncompressedSize;
      if (declared > limits.maxUnpackedBytes) throw new ArchiveRefused(`declares more than ${limits.maxUnpackedBytes} bytes once inflated, the most an archive may hold`);
      out.push({ entry, name, directory, executable: !directory && (mode & 0o111) !== 0 });
    }
  } catch (e) {
    if (e instanceof ArchiveRefused) throw e;
    // yauzl's own findings (a malformed header, a name it refuses, a size that lies) are the archive's.
    throw new ArchiveRefused((e as Error).message);
  }
  return out;
}

/**
 * The one directory that holds everything, when the archive's top level is a single directory
 * entry (as the peer takes a zipped folder): its contents are the source, not the folder.
 */
function singleRoot(planned: Planned[]): string | null {
  const top = planned.filter(p => !p.name.includes('/'));
  return top.length === 1 && top[0]!.directory ? top[0]!.name : null;
}

/** Passes bytes on while the archive's running total stays within the limit (the declared sizes were summed already: this holds whatever an entry inflates to). */
function counter(inflated: { bytes: number }, max: number): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      inflated.bytes += chunk.length;
      if (inflated.bytes > max) done(new ArchiveRefused(`inflates past ${max} bytes, the most an archive may hold`));
      else done(null, chunk);
    },
  });
}

/** A failure while extracting one entry, as the uploader should read it. */
function refusal(e: unknown, name: string): Error {
  if (e instanceof ArchiveRefused) return e;
  const err = e as NodeJS.ErrnoException;
  // A name that is a file and a directory at once, or a file held twice.
  if (err.code === 'EEXIST' || err.code === 'ENOTDIR' || err.code === 'EISDIR') return new ArchiveRefused(`the entry ${JSON.stringify(name)} clashes with another entry of the same path`);
  // yauzl's findings while inflating (a size that lies) carry no code; zlib's, a Z_ one.
  if ((err.code === undefined || err.code.startsWith('Z_')) && err.name !== 'AbortError') return new ArchiveRefused(`the entry ${JSON.stringify(name)} cannot be read: ${err.message}`);
  // A name component past the file system's 255 bytes, or a path past its PATH_MAX: the archive's doing.
  if (err.code === 'ENAMETOOLONG') return new ArchiveRefused(`the entry ${JSON.stringify(name)} has a name or path too long for the file system`);
  // A full disk is this machine's trouble, not the uploader's: still a server error, said plainly in the log.
  if (err.code === 'ENOSPC') return new Error(`No space left on the device that keeps uploaded archives, while unpacking the entry ${JSON.stringify(name)}`, { cause: err });
  return err;
}
