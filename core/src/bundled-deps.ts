// Loaded before the compiled build (`node --import`, scripts/node-flags.sh): imports that resolve
// to an entry file of a package that scripts/bundle-deps.ts bundled load its bundle instead, and a
// bundle's own imports of other packages resolve from the package's installed directory, as they
// would unbundled (core/vendor/manifest.json says where). Without a manifest, nothing changes.
import { readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

let manifest: { entries: Record<string, string>; packages: Record<string, string> } = { entries: {}, packages: {} };
try {
  manifest = JSON.parse(readFileSync(new URL('../vendor/manifest.json', import.meta.url), 'utf8')) as typeof manifest;
} catch {
  /* no bundles: every package loads as installed */
}
const bundleDirs = Object.entries(manifest.packages);
/** A package name, not a relative, absolute, URL or node: specifier. */
const bare = (specifier: string) => !/^(\.{1,2}\/|\/|[a-z][a-z0-9+.-]*:)/i.test(specifier);

if (bundleDirs.length) {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const parent = context.parentURL;
      const home = parent && bare(specifier) ? bundleDirs.find(([dir]) => parent.startsWith(dir))?.[1] : undefined;
      const resolved = nextResolve(specifier, home ? { ...context, parentURL: home } : context);
      const bundle = manifest.entries[resolved.url];
      return bundle ? { ...resolved, url: bundle } : resolved;
    },
  });
}
