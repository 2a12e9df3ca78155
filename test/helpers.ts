// Shared by the cross-package suites.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));
export const examplePlugin = path.join(repoRoot, 'examples/plugin-bookmarks');
export const cli = path.join(repoRoot, 'core/src/cli.ts');
