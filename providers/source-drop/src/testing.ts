// Zip archives for tests, written by yazl (a real zip writer), and the byte patches that make the
// archives no well-behaved writer makes: a name yazl refuses to write, a size that lies.
import { ZipFile } from 'yazl';

/** An entry's content, or its content with a Unix mode (type bits included: 0o120777 is a symbolic link) and whether to deflate it; a name ending in '/' is a directory. */
export type ZipEntry = string | Buffer | { content?: string | Buffer; mode?: number; compress?: boolean };

/** A zip archive of the entries, in their order. */
export async function zipOf(entries: Record<string, ZipEntry>): Promise<Buffer> {
  const zip = new ZipFile();
  for (const [name, entry] of Object.entries(entries)) {
    const { content = '', mode, compress } = typeof entry === 'string' || Buffer.isBuffer(entry) ? { content: entry } : entry;
    if (name.endsWith('/')) zip.addEmptyDirectory(name, mode === undefined ? {} : { mode });
    else zip.addBuffer(Buffer.from(content), name, { ...(mode === undefined ? {} : { mode }), ...(compress === undefined ? {} : { compress }) });
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The archive with every occurrence of the name `from` written as `to` (as long: the headers keep their lengths), e.g. a placeholder made "../x". */
export function renamed(zip: Buffer, from: string, to: string): Buffer {
  if (Buffer.byteLength(from) !== Buffer.byteLength(to)) throw new Error('renamed: the names must be as long');
  const out = Buffer.from(zip);
  const [a, b] = [Buffer.from(from), Buffer.from(to)];
  let found = 0;
  for (let at = out.indexOf(a); at !== -1; at = out.indexOf(a, at + 1), found++) b.copy(out, at);
  if (!found) throw new Error(`renamed: ${from} is not in the archive`);
  return out;
}

/** The archive with the size of `name` that its central directory declares (inflated) set to `size`. */
export function lyingSize(zip: Buffer, name: string, size: number): Buffer {
  const out = Buffer.from(zip);
  // Central directory headers: signature 0x02014b50, the uncompressed size at +24, the name's length at +28, the name at +46.
  for (let at = out.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])); at !== -1; at = out.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), at + 4)) {
    if (out.subarray(at + 46, at + 46 + out.readUInt16LE(at + 28)).toString() === name) {
      out.writeUInt32LE(size, at + 24);
      return out;
    }
  }
  throw new Error(`lyingSize: ${name} is not in the central directory`);
}
