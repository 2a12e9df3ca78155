// Paths a request names (build path, context, Dockerfile, publish directory) are the user's
// input: they must stay inside the checked-out source, symbolic links included.
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { BuildRequest } from '@berth/core';

const inside = (dir: string, p: string) => p === dir || p.startsWith(dir + path.sep);

/**
 * Resolves a user-given path against base and checks that it stays inside root (default base).
 * A leading "/" means base itself (the peer stores buildPath "/" for "the repository root"),
 * never the host's root.
 */
export function resolveInside(base: string, relative: string | null | undefined, what: string, root = base): string {
  const rel = (relative ?? '').trim();
  if (/[\0-\x1f\x7f]/.test(rel)) throw new Error(`${what} "${rel.replace(/[\0-\x1f\x7f]/g, '?')}" is not a valid path`);
  const full = path.resolve(base, rel.replace(/^\/+/, '') || '.');
  if (!inside(root, full)) throw new Error(`${what} "${rel}" points outside the source: use a path inside the repository`);
  let real: string;
  try {
    real = realpathSync(full);
  } catch {
    throw new Error(`${what} "${rel}" does not exist in the source`);
  }
  if (!inside(realpathSync(root), real)) throw new Error(`${what} "${rel}" leads outside the source through a symbolic link`);
  return full;
}

/** The application directory of a request: sourceDir / buildPath. */
export function appDirOf(request: Pick<BuildRequest, 'sourceDir' | 'buildPath'>): string {
  const app = resolveInside(request.sourceDir, request.buildPath, 'The build path');
  if (!statSync(app).isDirectory()) throw new Error(`The build path "${request.buildPath}" is not a directory`);
  return app;
}

/** The build context of a request: sourceDir / buildPath / dockerContextPath, checked to stay inside sourceDir. */
export function contextDirOf(request: Pick<BuildRequest, 'sourceDir' | 'buildPath' | 'dockerContextPath'>): string {
  const context = resolveInside(appDirOf(request), request.dockerContextPath, 'The Docker context path', request.sourceDir);
  if (!statSync(context).isDirectory()) throw new Error(`The Docker context path "${request.dockerContextPath}" is not a directory`);
  return context;
}
