// The files of a checkout that patches name: a path must stay inside the repository whatever it
// holds. A path is refused on input unless it is relative, made of names (no empty, "." or ".."
// segment) and outside .git; on the checkout, a symbolic link is followed only while it stays
// inside, so a repository cannot send a write or a read anywhere else on this machine.
import type { Stats } from 'node:fs';
import { lstat, mkdir, readdir, readFile, realpath, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { PatchType } from './entities.ts';
import type { RepoEntry } from './schemas.ts';

/** Why `filePath` names no file of a repository, or null when it does. */
export function filePathProblem(filePath: string): string | null {
  if (filePath.startsWith('/')) return 'must be relative to the repository, not absolute';
  if (/[\0-\x1f\x7f]/.test(filePath)) return 'must not contain control characters';
  const segments = filePath.split('/');
  if (segments.some(s => s === '' || s === '.')) return 'must not have empty or "." segments (write a/b, not ./a//b)';
  if (segments.includes('..')) return 'must not have ".." segments: it must stay inside the repository';
  if (segments.includes('.git')) return "must not be inside .git: git's own files are no file of the repository";
  if (segments.some(s => Buffer.byteLength(s) > 255)) return 'must not have a name longer than 255 bytes (the file system allows no longer)';
  return null;
}

/** A patch that cannot be applied to this checkout, with why (the deploy fails naming the file). */
export class PatchFailure extends Error {}

const inside = (root: string, p: string) => p === root || p.startsWith(root + path.sep);

async function lstatOrNull(p: string): Promise<Stats | null> {
  try {
    return await lstat(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * Where the relative `segments` lead from `root` (a real path) on this file system: each symbolic
 * link on the way followed while it stays inside root, a missing rest joined as it is (a write
 * makes it). PatchFailure when a link leaves root or a file stands where a directory should.
 */
async function locate(root: string, segments: string[]): Promise<string> {
  let at = root;
  for (let i = 0; i < segments.length; i++) {
    const shown = segments.slice(0, i + 1).join('/');
    const next = path.join(at, segments[i]!);
    const found = await lstatOrNull(next);
    if (!found) return path.join(next, ...segments.slice(i + 1));
    if (found.isSymbolicLink()) {
      const real = await realpath(next).catch(() => null);
      if (real === null) throw new PatchFailure(`${shown} is a symbolic link to nothing`);
      if (!inside(root, real)) throw new PatchFailure(`${shown} is a symbolic link that leaves the repository`);
      if (i < segments.length - 1 && !(await stat(real)).isDirectory()) throw new PatchFailure(`${shown} is a link to a file, not a directory`);
      at = real;
      continue;
    }
    if (i < segments.length - 1 && !found.isDirectory()) throw new PatchFailure(`${shown} is a file, not a directory`);
    at = next;
  }
  return at;
}

/** Applies one patch to the checkout at `root` (its real path): writes the whole file (create, update) or removes it (delete; absent is fine, as with the peer). */
export async function applyPatch(root: string, type: PatchType, filePath: string, content: string): Promise<'written' | 'created' | 'removed' | 'absent'> {
  const problem = filePathProblem(filePath);
  if (problem) throw new PatchFailure(`the path ${problem}`);
  const segments = filePath.split('/');
  if (type === 'delete') {
    // The entry itself goes (a symbolic link, not what it points to): only its directory is followed.
    const target = path.join(await locate(root, segments.slice(0, -1)), segments.at(-1)!);
    const found = await lstatOrNull(target);
    if (!found) return 'absent';
    if (found.isDirectory()) throw new PatchFailure(`${filePath} is a directory: a patch deletes one file`);
    await unlink(target);
    return 'removed';
  }
  const target = await locate(root, segments);
  const found = await stat(target).catch(() => null);
  if (found?.isDirectory()) throw new PatchFailure(`${filePath} is a directory: a patch writes one file`);
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, content, { mode: 0o644 });
  return found ? 'written' : 'created';
}

/** The content of the checkout's file at `filePath` (root: its real path); null when it has none there. */
export async function readRepoFile(root: string, filePath: string, limit: number): Promise<string | null> {
  const target = await locate(root, filePath.split('/'));
  const found = await stat(target).catch(() => null);
  if (!found) return null;
  if (!found.isFile()) throw new PatchFailure(`${filePath} is not a file`);
  if (found.size > limit) throw new PatchFailure(`${filePath} is larger than ${limit} bytes: too large to edit as a patch`);
  return readFile(target, 'utf8');
}

/**
 * The checkout's files as a tree (the peer's readRepoDirectories: what git tracks, so .git is left
 * out and empty directories do not show), in git's order; symbolic links are listed as files and
 * never followed. More than `limit` files: PatchFailure.
 */
export async function repoTree(root: string, limit: number): Promise<RepoEntry[]> {
  const files: string[] = [];
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) await walk(path.join(dir, entry.name), rel);
      else files.push(rel);
      if (files.length > limit) throw new PatchFailure(`the repository has more than ${limit} files: too many to list`);
    }
  };
  await walk(root, '');
  // git orders by the bytes of the whole path.
  files.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const top: RepoEntry[] = [];
  const directories = new Map<string, RepoEntry>();
  for (const file of files) {
    const parts = file.split('/');
    let siblings = top;
    for (let i = 0; i < parts.length; i++) {
      const at = parts.slice(0, i + 1).join('/');
      if (i === parts.length - 1) {
        siblings.push({ name: parts[i]!, path: at, type: 'file' });
        break;
      }
      let directory = directories.get(at);
      if (!directory) {
        directory = { name: parts[i]!, path: at, type: 'directory', children: [] };
        directories.set(at, directory);
        siblings.push(directory);
      }
      siblings = directory.children!;
    }
  }
  return top;
}
