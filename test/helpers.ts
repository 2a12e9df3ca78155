// Shared by the cross-package suites.
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));
export const examplePlugin = path.join(repoRoot, 'examples/plugin-bookmarks');
export const faultyPlugin = path.join(repoRoot, 'test/fixtures/plugin-faulty');
const compiledCli = path.join(repoRoot, 'core/src/cli.js');
/**
 * The operator command as scripts/start.sh runs it: the compiled build with the production
 * Node flags when it exists (scripts/test.sh builds it first), else the TypeScript sources.
 */
export const cli = existsSync(compiledCli) ? compiledCli : path.join(repoRoot, 'core/src/cli.ts');
export const nodeFlags =
  cli === compiledCli
    ? execFileSync('bash', [path.join(repoRoot, 'scripts/node-flags.sh')])
        .toString()
        .trim()
        .split(/\s+/)
    : [];
