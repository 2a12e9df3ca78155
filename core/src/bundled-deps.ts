// Loaded before the compiled build (`node --import`, scripts/node-flags.sh): imports that resolve
// to an entry file of a package that scripts/bundle-deps.ts bundled load its bundle instead
// (core/vendor/manifest.json maps one to the other). Without a manifest, nothing changes.
import { readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

let manifest: Record<string, string> = {};
try {
  manifest = JSON.parse(readFileSync(new URL('../vendor/manifest.json', import.meta.url), 'utf8')) as Record<string, string>;
} catch { /* no bundles: every package loads as installed */ }

if (Object.keys(manifest).length) {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      const bundle = manifest[resolved.url];
      return bundle ? { ...resolved, url: bundle } : resolved;
    },
  });
}
