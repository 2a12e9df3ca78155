// Finds the providers the operator enabled and registers each instance in the container as
// `<contract>.<id>`. Built-in providers are the folders of providers/ whose package.json says
// which `berth.provider` they are (read without importing them); every built-in is enabled
// unless the config sets it to false; a third party's comes from `resolve` (a path or a
// package name). Only enabled providers are imported.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { asValue } from 'awilix';
import { Value } from 'typebox/value';
import type { TObject, TSchema } from 'typebox';
import { ConfigError, envValue, sourceOf, type BerthConfig } from './config.ts';
import type { BerthContainer } from './container.ts';
import { entryOf, resolveExtra } from './loader.ts';
import { isProviderDescriptor, providerName, ProviderRegistry, type ContractName, type ProviderContracts, type ProviderDescriptor } from './provider.ts';
import { resolveBerthForThirdParties } from './berth-resolution.ts';

export const providersDir = fileURLToPath(new URL('../../providers/', import.meta.url));

interface BuiltinProvider {
  contract: string;
  id: string;
  dir: string;
}

/** The providers shipped with Berth, from their package.json (`"berth": { "provider": "<contract>.<id>" }`). */
export function builtinProviders(): BuiltinProvider[] {
  if (!existsSync(providersDir)) return [];
  const out: BuiltinProvider[] = [];
  for (const d of readdirSync(providersDir, { withFileTypes: true })) {
    const file = path.join(providersDir, d.name, 'package.json');
    if (!d.isDirectory() || !existsSync(file)) continue;
    const name = (JSON.parse(readFileSync(file, 'utf8')) as { berth?: { provider?: string } }).berth?.provider;
    if (!name) continue; // a library shared by providers, not one itself
    const [contract, id] = name.split('.') as [string, string];
    out.push({ contract, id, dir: path.join(providersDir, d.name) });
  }
  return out.sort((a, b) => providerName(a.contract, a.id).localeCompare(providerName(b.contract, b.id)));
}

interface EnabledProvider {
  contract: string;
  id: string;
  url: string;
  source: string;
  options: Record<string, unknown>;
}

/** The enabled providers: the built-ins less those set to false, plus the third parties' entries. */
export function enabledProviders(config: BerthConfig['providers']): EnabledProvider[] {
  const builtin = builtinProviders();
  const out: EnabledProvider[] = [];
  const key = (contract: string, id: string) => `providers.${contract}.${id}`;
  for (const b of builtin) {
    const entry = config[b.contract]?.[b.id];
    if (entry === false || (typeof entry === 'object' && entry.resolve)) continue;
    const options = typeof entry === 'object' ? (entry.options ?? {}) : {};
    out.push({ contract: b.contract, id: b.id, url: pathToFileURL(entryOf(b.dir)).href, source: `@berth/provider-${b.contract}-${b.id}`, options });
  }
  for (const [contract, entries] of Object.entries(config)) {
    for (const [id, entry] of Object.entries(entries)) {
      if (typeof entry === 'object' && entry.resolve) {
        out.push({ contract, id, url: resolveExtra(entry.resolve, 'provider'), source: entry.resolve, options: entry.options ?? {} });
      } else if (entry !== false && !builtin.some(b => b.contract === contract && b.id === id)) {
        const same = builtin.filter(b => b.contract === contract).map(b => b.id);
        throw new ConfigError(`Invalid configuration: ${key(contract, id)} is not a built-in provider (built-in ${contract} providers: ${same.join(', ') || 'none'}); a third party's needs "resolve"`);
      }
    }
  }
  return out;
}

async function importDescriptor(p: EnabledProvider): Promise<ProviderDescriptor> {
  let mod: { default?: unknown };
  try {
    mod = await import(p.url);
  } catch (e) {
    throw new Error(`Cannot load provider ${providerName(p.contract, p.id)} from ${p.source}: ${(e as Error).message}`);
  }
  const descriptor = mod.default;
  if (!isProviderDescriptor(descriptor)) throw new Error(`Provider ${p.source} has no default export made with defineProvider()`);
  if (descriptor.contract !== p.contract || descriptor.id !== p.id) {
    throw new ConfigError(`Invalid configuration: providers.${p.contract}.${p.id} loads ${p.source}, which is the provider ${providerName(descriptor.contract, descriptor.id)}`);
  }
  return descriptor;
}

/**
 * The options with their defaults, or a ConfigError naming the bad key and its variable. An option
 * the entry does not set is taken from its `env` variable, else from the top-level key it was
 * before it became the provider's (`formerly`): what the operator writes in `options` wins.
 */
function optionsOf(descriptor: ProviderDescriptor, p: EnabledProvider, config: BerthConfig): unknown {
  const at = `providers.${p.contract}.${p.id}.options`;
  const source = sourceOf(config);
  const raw = structuredClone(p.options);
  const origin: Record<string, string> = {};
  for (const [key, schema] of Object.entries((descriptor.options as TObject).properties ?? {})) {
    if (key in raw) continue;
    const { env, formerly } = schema as { env?: string; formerly?: string };
    const text = env ? source.env[env] : undefined;
    if (env && text !== undefined && text !== '') {
      raw[key] = envValue(schema as TSchema, env, text);
      origin[key] = `${env} (${at}.${key})`;
    } else if (formerly && source.unclaimed && formerly in source.unclaimed) {
      raw[key] = source.unclaimed[formerly];
      origin[key] = `"${formerly}" (now ${at}.${key})`;
    }
    if (formerly) delete source.unclaimed?.[formerly];
  }
  const options = Value.Default(descriptor.options, Value.Convert(descriptor.options, raw));
  const error = [...Value.Errors(descriptor.options, options)][0];
  if (error) {
    const path = error.instancePath.split('/').slice(1);
    if (path.length && origin[path[0]!]) throw new ConfigError(`Invalid configuration: ${origin[path[0]!]} ${error.message}`);
    // A missing or an unknown option: name it, not only the object that lacks or has it.
    const { additionalProperties: unknown, requiredProperties: missing } = error.params as { additionalProperties?: string[]; requiredProperties?: string[] };
    const named = (unknown ?? missing ?? []).find(k => error.keyword === 'additionalProperties' || !(k in (options as object)));
    throw new ConfigError(`Invalid configuration: ${[at, ...path].join('.')}${named ? `.${named}` : ''} ${error.message}`);
  }
  return options;
}

/** Contracts the kernel loads itself, when it needs them: the embedded database only without databaseUrl. */
const ON_DEMAND = new Set(['persistence']);

/** Imports the enabled providers, makes their instances and registers them; answers the registry. */
export async function loadProviders(config: BerthConfig, container: BerthContainer): Promise<ProviderRegistry> {
  const registry = new ProviderRegistry(container);
  const enabled = enabledProviders(config.providers).filter(p => !ON_DEMAND.has(p.contract));
  if (enabled.some(p => !p.url.startsWith(pathToFileURL(providersDir).href))) resolveBerthForThirdParties();
  const descriptors = await Promise.all(enabled.map(importDescriptor));
  for (const [i, descriptor] of descriptors.entries()) {
    const p = enabled[i]!;
    const instance = await descriptor.create(optionsOf(descriptor, p, config), { config });
    container.register({ [providerName(p.contract, p.id)]: asValue(instance) });
    registry.add(p.contract, p.id);
  }
  return registry;
}

/**
 * One enabled provider's instance, made without a kernel: the embedded database for the kernel,
 * a storage for an operator command (`berth restore --from s3://…`). Without an id, the first
 * enabled one of the contract.
 */
export async function loadProvider<C extends ContractName>(config: BerthConfig, contract: C, id?: string): Promise<ProviderContracts[C]> {
  const p = enabledProviders(config.providers).find(e => e.contract === contract && (id === undefined || e.id === id));
  if (!p) throw new ConfigError(`No ${contract} provider${id ? ` ${providerName(contract, id)}` : ''} is enabled (config key providers.${contract}${id ? `.${id}` : ''})`);
  if (!p.url.startsWith(pathToFileURL(providersDir).href)) resolveBerthForThirdParties();
  const descriptor = await importDescriptor(p);
  return (await descriptor.create(optionsOf(descriptor, p, config), { config })) as ProviderContracts[C];
}
