// Finds the plugins the operator enabled: built-in ones by name (folders of plugins/), third
// parties by path or package name. Orders them so dependencies register first.
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { BERTH_PLUGIN, type BerthPlugin, type PluginInfo } from './plugin.ts';
import { resolveBerthForThirdParties } from './berth-resolution.ts';
import { applySections, type ConfigSection } from './config-sections.ts';
import { loadConfig, type BerthConfig } from './config.ts';
import type { TObject } from 'typebox';

export const pluginsDir = fileURLToPath(new URL('../../plugins/', import.meta.url));
/** Running from the compiled build (scripts/start.sh) or from the TypeScript sources (tests, development). */
const compiled = import.meta.url.endsWith('.js');
const sourceExt = compiled ? '.js' : '.ts';

/** Names of the plugins shipped with Berth. */
export function builtinPlugins(): string[] {
  if (!existsSync(pluginsDir)) return [];
  return readdirSync(pluginsDir, { withFileTypes: true })
    .filter(d => d.isDirectory() && existsSync(path.join(pluginsDir, d.name, 'src/index.ts')))
    .map(d => d.name)
    .sort();
}

export interface LoadedPlugin {
  plugin: BerthPlugin;
  info: PluginInfo;
}

async function importPlugin(specifier: string, source: string): Promise<LoadedPlugin> {
  let mod: { default?: unknown };
  try {
    mod = await import(specifier);
  } catch (e) {
    throw new Error(`Cannot load plugin ${source}: ${(e as Error).message}`);
  }
  const plugin = mod.default as BerthPlugin | undefined;
  // cast: definePlugin's symbol key
  const meta = plugin && (plugin as unknown as Record<symbol, Omit<PluginInfo, 'source'>>)[BERTH_PLUGIN];
  if (typeof plugin !== 'function' || !meta) throw new Error(`Plugin ${source} has no default export made with definePlugin()`);
  return { plugin, info: { ...meta, source } };
}

/** The entry file of a plugin or provider folder: its package.json exports["."] or main, else src/index.ts. */
export function entryOf(dir: string): string {
  const pkgFile = path.join(dir, 'package.json');
  if (existsSync(pkgFile)) {
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { exports?: unknown; main?: string };
    let target: unknown = pkg.exports;
    if (target && typeof target === 'object' && '.' in target) target = (target as Record<string, unknown>)['.'];
    if (target && typeof target === 'object') {
      const conditions = target as Record<string, unknown>;
      target = (compiled ? conditions['berth-js'] : undefined) ?? conditions.import ?? conditions.default;
    }
    if (typeof target === 'string') return path.join(dir, target);
    if (pkg.main) return path.join(dir, pkg.main);
  }
  return path.join(dir, `src/index${sourceExt}`);
}

/** The URL of a third party's plugin or provider: an absolute path (file or folder) or a package name. */
export function resolveExtra(spec: string, what = 'plugin'): string {
  if (path.isAbsolute(spec)) {
    return pathToFileURL(existsSync(spec) && statSync(spec).isDirectory() ? entryOf(spec) : spec).href;
  }
  // A package name, found in node_modules from the operator's working directory upwards.
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', spec);
    if (existsSync(candidate)) return pathToFileURL(entryOf(realpathSync(candidate))).href;
    if (path.dirname(dir) === dir) break;
  }
  throw new Error(`Cannot find ${what} package "${spec}" from ${process.cwd()}`);
}

/**
 * Plugins split out of a built-in one (or given the kernel's work) after operators could list it: a
 * list naming the original enables its parts too, so it keeps booting. Managing accounts went from
 * the kernel to the user plugin, which auth and organization use.
 */
const splitOff: Record<string, string[]> = { workloads: ['hosts'], auth: ['user'], organization: ['user'] };

export async function loadPlugins(enabled: string[] | undefined, extra: string[]): Promise<LoadedPlugin[]> {
  const builtin = builtinPlugins();
  const names = enabled ? [...new Set(enabled.flatMap(n => [...(splitOff[n] ?? []), n]))] : builtin;
  const unknown = names.filter(n => !builtin.includes(n));
  if (unknown.length) throw new Error(`Unknown plugin(s) in the configuration: ${unknown.join(', ')} (built-in: ${builtin.join(', ')})`);
  if (extra.length) resolveBerthForThirdParties();
  const loaded = await Promise.all([
    ...names.map(n => importPlugin(pathToFileURL(path.join(pluginsDir, n, `src/index${sourceExt}`)).href, n)),
    ...extra.map(spec => importPlugin(resolveExtra(spec), spec)),
  ]);
  return orderByDependencies(loaded);
}

function orderByDependencies(plugins: LoadedPlugin[]): LoadedPlugin[] {
  const byName = new Map(plugins.map(p => [p.info.name, p]));
  const known = new Set([...builtinPlugins(), ...byName.keys()]);
  for (const p of plugins) {
    const unknown = p.info.uses.filter(u => !known.has(u));
    if (unknown.length) throw new Error(`Plugin "${p.info.name}" uses ${unknown.map(u => `"${u}"`).join(', ')}, which is no plugin (built-in or enabled)`);
  }
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

interface PluginPackage {
  name: string;
  berth?: { config?: string };
}
const packageOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PluginPackage;

/**
 * The configuration schema a built-in plugin's package.json names (`"berth": {"config": "src/config.ts"}`),
 * read without loading the plugin, so that a disabled plugin's keys are known too.
 */
export async function builtinPluginConfig(name: string): Promise<{ owner: string; schema?: TObject }> {
  const dir = path.join(pluginsDir, name);
  const pkg = packageOf(dir);
  const file = pkg.berth?.config;
  if (!file) return { owner: pkg.name };
  const mod = (await import(pathToFileURL(path.join(dir, file.replace(/\.ts$/, sourceExt))).href)) as { default?: TObject };
  if (!mod.default?.properties) throw new Error(`${pkg.name}: ${file} has no default export that is an object schema`);
  return { owner: pkg.name, schema: mod.default };
}

/** Every plugin's configuration section: the enabled ones' (as their definitions declare them) and the disabled built-ins'. */
export async function pluginSections(plugins: LoadedPlugin[]): Promise<ConfigSection[]> {
  const out: ConfigSection[] = [];
  for (const p of plugins) {
    const builtin = builtinPlugins().includes(p.info.source);
    const declared = builtin ? await builtinPluginConfig(p.info.source) : { owner: p.info.source, schema: undefined };
    const schema = p.info.config ?? declared.schema;
    if (builtin && p.info.config && declared.schema && p.info.config !== declared.schema) {
      throw new Error(`Plugin ${p.info.name}: definePlugin's config is not the schema its package.json names`);
    }
    if (schema) out.push({ name: p.info.name, owner: declared.owner, schema, enabled: true });
  }
  const enabled = new Set(plugins.map(p => p.info.source));
  for (const name of builtinPlugins().filter(n => !enabled.has(n))) {
    const { owner, schema } = await builtinPluginConfig(name);
    if (schema) out.push({ name, owner, schema, enabled: false });
  }
  return out;
}

/** Imports the enabled plugins and completes the configuration with their sections; answers them and the warnings to log. */
export async function loadConfiguredPlugins(config: BerthConfig): Promise<{ plugins: LoadedPlugin[]; warnings: string[] }> {
  const plugins = await loadPlugins(config.plugins, config.extraPlugins);
  return { plugins, warnings: applySections(config, await pluginSections(plugins)) };
}

/** The whole configuration without starting anything: the kernel's keys and every enabled plugin's section, with the warnings. */
export async function resolveConfig(env: NodeJS.ProcessEnv, overrides: Partial<BerthConfig> = {}): Promise<{ config: BerthConfig; warnings: string[]; plugins: LoadedPlugin[] }> {
  const config = loadConfig(env, overrides);
  return { config, ...(await loadConfiguredPlugins(config)) };
}
