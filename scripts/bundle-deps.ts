// Part of the production build (scripts/build.sh): bundles the dependencies that are made of
// hundreds of small ES modules into a few files each, in core/vendor/ (gitignored), and writes
// core/vendor/manifest.json, which maps each installed entry file to its bundle, and each bundle's
// directory to the package's own (where its imports of other packages are resolved). The compiled
// build loads core/src/bundled-deps.js first (scripts/node-flags.sh), which redirects those
// imports. Node keeps every loaded module's record, source text and bytecode resident, so one
// file instead of hundreds is measurably lighter (figures: bench/README.md). Only a package's
// public entry points are bundled (its "exports"), each of them once, with the code they share
// split into common chunks: every importer gets the same module instances. The package's own
// imports of other packages stay imports.
//
//   node scripts/bundle-deps.ts
import { build } from 'esbuild';
import { existsSync, readFileSync, rmSync, writeFileSync, mkdirSync, realpathSync } from 'node:fs';
import { findPackageJSON } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outRoot = path.join(root, 'core/vendor');

/** Each bundled package, found the way Node finds it: from core, through the packages that depend on it. */
const bundled: { name: string; via: string[] }[] = [
  { name: 'typebox', via: [] },
  { name: 'kysely', via: ['@mikro-orm/postgresql', '@mikro-orm/sql'] },
  { name: '@mikro-orm/core', via: [] },
  { name: '@mikro-orm/sql', via: ['@mikro-orm/postgresql'] },
  { name: '@mikro-orm/postgresql', via: [] },
  { name: '@mikro-orm/migrations', via: [] },
];

/** The directory of `name` as resolved from core/src through the chain `via`. */
function packageDir(name: string, via: string[]): string {
  let from = pathToFileURL(path.join(root, 'core/src/index.ts')).href;
  for (const spec of [...via, name]) {
    const file = findPackageJSON(spec, from);
    if (!file) throw new Error(`bundle-deps: cannot find ${spec} from ${from}`);
    // pnpm links packages: the next one is found from where this one really is.
    from = pathToFileURL(realpathSync(file)).href;
  }
  return path.dirname(fileURLToPath(from));
}

/** The file of an "exports" target for an ES module importer under Node (conditions node, import, default). */
function target(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [cond, v] of Object.entries(value)) {
      if (cond === 'node' || cond === 'import' || cond === 'default') {
        const t = target(v);
        if (t) return t;
      }
    }
  }
  return undefined;
}

/** The package's public entry points: subpath → file. */
function entries(dir: string): Record<string, string> {
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { exports?: unknown; module?: string; main?: string };
  const out: Record<string, string> = {};
  const exp = pkg.exports;
  if (exp && typeof exp === 'object' && Object.keys(exp).some(k => k.startsWith('.'))) {
    for (const [sub, v] of Object.entries(exp)) {
      const t = target(v);
      if (!sub.includes('*') && t && /\.m?js$/.test(t)) out[sub] = t;
    }
  } else {
    const t = target(exp) ?? pkg.module ?? pkg.main;
    if (t) out['.'] = t;
  }
  return out;
}

rmSync(outRoot, { recursive: true, force: true });
mkdirSync(outRoot, { recursive: true });
const manifest: { entries: Record<string, string>; packages: Record<string, string> } = { entries: {}, packages: {} };
for (const { name, via } of bundled) {
  const dir = packageDir(name, via);
  const subs = entries(dir);
  const entryPoints: Record<string, string> = {};
  for (const [sub, file] of Object.entries(subs)) entryPoints[sub === '.' ? 'index' : sub.slice(2).replace(/\//g, '-')] = path.join(dir, file);
  const outdir = path.join(outRoot, name);
  await build({
    entryPoints,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    packages: 'external',
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    logLevel: 'warning',
    // V8 keeps every loaded script's source text resident: without comments and indentation the
    // bundles' text is about half as large. Names stay (keepNames), so stack traces, class names
    // and error names read as before.
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    legalComments: 'none',
  });
  for (const [entry, file] of Object.entries(entryPoints)) {
    const out = path.join(outdir, `${entry}.mjs`);
    if (!existsSync(out)) throw new Error(`bundle-deps: esbuild wrote no ${out}`);
    manifest.entries[pathToFileURL(file).href] = pathToFileURL(out).href;
  }
  manifest.packages[pathToFileURL(outdir).href + '/'] = pathToFileURL(path.join(dir, 'package.json')).href;
}
writeFileSync(path.join(outRoot, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
