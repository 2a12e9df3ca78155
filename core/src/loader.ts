// Finds the plugins the operator enabled: built-in ones by name (folders of plugins/), third
// parties by path or package name. Orders them so dependencies register first.
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { BERTH_PLUGIN, type BerthPlugin, type PluginInfo } from './plugin.ts';

export const pluginsDir = fileURLToPath(new URL('../../plugins/', import.meta.url));

/** Names of the plugins shipped with Berth. */
export function builtinPlugins(): string[] {
  if (!existsSync(pluginsDir)) return [];
  return readdirSync(pluginsDir, { withFileTypes: true })
    .filter(d => d.isDirectory() && existsSync(path.join(pluginsDir, d.name, 'src/index.ts')))
    .map(d => d.name)
    .sort();
}

export interface LoadedPlugin { plugin: BerthPlugin; info: PluginInfo }

async function importPlugin(specifier: string, source: string): Promise<LoadedPlugin> {
  let mod: { default?: unknown };
  try {
    mod = await import(specifier);
  } catch (e) {
    throw new Error(`Cannot load plugin ${source}: ${(e as Error).message}`);
  }
  const plugin = mod.default as BerthPlugin | undefined;
  const meta = plugin && (plugin as unknown as Record<symbol, Omit<PluginInfo, 'source'>>)[BERTH_PLUGIN];
  if (typeof plugin !== 'function' || !meta) throw new Error(`Plugin ${source} has no default export made with definePlugin()`);
  return { plugin, info: { ...meta, source } };
}

function resolveExtra(spec: string): string {
  if (path.isAbsolute(spec)) {
    const entry = existsSync(path.join(spec, 'package.json')) ? createRequire(path.join(spec, 'package.json')).resolve(spec) : spec;
    return pathToFileURL(entry).href;
  }
  // A package name, resolved from the operator's working directory.
  try {
    return pathToFileURL(createRequire(path.join(process.cwd(), 'package.json')).resolve(spec)).href;
  } catch {
    throw new Error(`Cannot find plugin package "${spec}" from ${process.cwd()}`);
  }
}

export async function loadPlugins(enabled: string[] | undefined, extra: string[]): Promise<LoadedPlugin[]> {
  const builtin = builtinPlugins();
  const names = enabled ?? builtin;
  const unknown = names.filter(n => !builtin.includes(n));
  if (unknown.length) throw new Error(`Unknown plugin(s) in the configuration: ${unknown.join(', ')} (built-in: ${builtin.join(', ')})`);
  const loaded = await Promise.all([
    ...names.map(n => importPlugin(pathToFileURL(path.join(pluginsDir, n, 'src/index.ts')).href, n)),
    ...extra.map(spec => importPlugin(resolveExtra(spec), spec)),
  ]);
  return orderByDependencies(loaded);
}

function orderByDependencies(plugins: LoadedPlugin[]): LoadedPlugin[] {
  const byName = new Map(plugins.map(p => [p.info.name, p]));
  const out: LoadedPlugin[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (p: LoadedPlugin, chain: string[]) => {
    if (state.get(p.info.name) === 'done') return;
    if (state.get(p.info.name) === 'visiting') throw new Error(`Plugin dependency cycle: ${[...chain, p.info.name].join(' -> ')}`);
    state.set(p.info.name, 'visiting');
    for (const dep of p.info.dependencies) {
      const d = byName.get(dep);
      if (!d) throw new Error(`Plugin "${p.info.name}" needs plugin "${dep}", which is not enabled`);
      visit(d, [...chain, p.info.name]);
    }
    state.set(p.info.name, 'done');
    out.push(p);
  };
  for (const p of plugins) visit(p, []);
  return out;
}
