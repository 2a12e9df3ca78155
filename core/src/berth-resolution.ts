// How a package outside Berth's repository imports Berth: `@berth/core` (and any other
// `@berth/*` package: `@berth/core/testing`, `@berth/plugin-workloads/testing`, a built-in
// driver to extend) resolves to the running Berth's own copy, whatever the package's own
// node_modules hold. A Node module-resolution hook (module.register) re-resolves such
// specifiers from inside Berth's package, with the same conditions (berth-js in the compiled
// build), so a third party needs no install, no symlink and no build of Berth.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Berth's own packages: name → the URL of their package.json (a parent from which the name self-resolves). */
export function berthPackages(): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (dir: string) => {
    const file = path.join(dir, 'package.json');
    if (!existsSync(file)) return;
    const { name } = JSON.parse(readFileSync(file, 'utf8')) as { name?: string };
    if (name?.startsWith('@berth/')) out[name] = pathToFileURL(file).href;
  };
  add(path.join(repoRoot, 'core'));
  for (const group of ['plugins', 'providers']) {
    const base = path.join(repoRoot, group);
    if (!existsSync(base)) continue;
    for (const d of readdirSync(base, { withFileTypes: true })) if (d.isDirectory()) add(path.join(base, d.name));
  }
  return out;
}

// The hook runs on Node's loader thread: a self-contained module, given Berth's packages. It
// redirects every import of one of them, wherever it comes from (a package outside the tree, or
// one installed into Berth's node_modules without its own copy); inside Berth's workspace the
// answer is the file the workspace link already leads to.
const hook = `
let packages = {};
export function initialize(data) { packages = data.packages; }
export function resolve(specifier, context, next) {
  if (specifier.startsWith('@berth/')) {
    const name = specifier.split('/').slice(0, 2).join('/');
    if (packages[name]) return next(specifier, { ...context, parentURL: packages[name] });
  }
  return next(specifier, context);
}
`;

let registered = false;

/** Installs the hook once per process (before a third party's provider or plugin is imported). */
export function resolveBerthForThirdParties(): void {
  if (registered) return;
  registered = true;
  register(`data:text/javascript,${encodeURIComponent(hook)}`, { data: { packages: berthPackages() } });
}
