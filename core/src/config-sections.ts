// The plugins' sections of the configuration: each plugin declares its keys in a schema of its
// own (`definePlugin({ config })`, and for a built-in one the `berth.config` module its
// package.json names, so that a disabled plugin's keys are known without loading it). In the
// file a plugin's keys sit in the section named after it; the top-level places they had before
// they moved are still read, with one warning. A key of a disabled plugin is reported, never fatal.
import type { TObject, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { ConfigError, envTable, envValue, KernelConfig, sourceOf, validateSection, type BerthConfig } from './config.ts';

export interface ConfigSection {
  /** The section's name in the file: the plugin's short name. */
  name: string;
  /** The package that declares it. */
  owner: string;
  schema: TObject;
  enabled: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validates every enabled section (its defaults applied) and merges its keys into `config`; a
 * disabled plugin's keys get their defaults only.
 * Answers the warnings to log: old top-level keys (one warning naming each one's section) and
 * keys of disabled plugins (one per plugin). Keys no section declares are kept in the source
 * (`unclaimed`): the providers take the ones their options name as `formerly`.
 */
export function applySections(config: BerthConfig, sections: ConfigSection[]): string[] {
  const source = sourceOf(config);
  const file = source.file ?? 'the configuration file';
  const owners = new Map<string, ConfigSection>();
  for (const s of sections) {
    for (const key of Object.keys(s.schema.properties)) {
      const other = owners.get(key);
      if (other) throw new ConfigError(`Invalid configuration: the key ${key} is declared by both ${other.owner} and ${s.owner}`);
      if (key in KernelConfig.properties) throw new ConfigError(`Invalid configuration: ${s.owner} declares the key ${key}, which is the kernel's`);
      owners.set(key, s);
    }
  }
  const byName = new Map(sections.map(s => [s.name, s]));
  const raw = new Map<ConfigSection, Record<string, unknown>>(sections.map(s => [s, {}]));
  const origin = new Map<ConfigSection, Record<string, string>>(sections.map(s => [s, {}]));
  const moved: string[] = [];
  const ignored = new Map<ConfigSection, string[]>();
  const unclaimed: Record<string, unknown> = {};
  const ignore = (s: ConfigSection, what: string) => void ignored.set(s, [...(ignored.get(s) ?? []), what]);
  const set = (s: ConfigSection, key: string, value: unknown, from: string) => {
    raw.get(s)![key] = value;
    origin.get(s)![key] = from;
  };
  const envOf = (s: ConfigSection, key: string) => (s.schema.properties[key] as { env?: string }).env;

  // The file: old top-level keys first, so that the same key inside its section wins.
  for (const [key, value] of Object.entries(source.entries)) {
    if (byName.has(key)) continue;
    const s = owners.get(key);
    if (!s) {
      unclaimed[key] = value;
      continue;
    }
    if (!s.enabled) {
      ignore(s, `"${key}" in ${file}`);
      continue;
    }
    moved.push(`${key} → ${s.name}`);
    set(s, key, value, `"${key}" in ${file} (section ${s.name}${envOf(s, key) ? `, env ${envOf(s, key)}` : ''})`);
  }
  for (const [name, value] of Object.entries(source.entries)) {
    const s = byName.get(name);
    if (!s) continue;
    if (!s.enabled) {
      ignore(s, `section "${name}" in ${file}`);
      continue;
    }
    if (!isObject(value)) throw new ConfigError(`Invalid configuration: "${name}" in ${file} must be an object (the keys of plugin ${name})`);
    for (const [key, v] of Object.entries(value)) {
      if (!(key in s.schema.properties)) {
        throw new ConfigError(`Invalid configuration: unknown key "${name}.${key}" in ${file} (${s.owner} declares: ${Object.keys(s.schema.properties).join(', ')})`);
      }
      set(s, key, v, `"${name}.${key}" in ${file}${envOf(s, key) ? ` (env ${envOf(s, key)})` : ''}`);
    }
  }
  for (const s of sections) {
    for (const { key, env } of envTable(s.schema)) {
      const text = source.env[env];
      if (text === undefined || text === '') continue;
      if (!s.enabled) ignore(s, env);
      else set(s, key, envValue(s.schema.properties[key] as TSchema, env, text), `${env} (${s.name}.${key})`);
    }
  }
  for (const [key, value] of Object.entries(source.overrides)) {
    const s = owners.get(key);
    if (s?.enabled) set(s, key, value, key);
    else if (!s) unclaimed[key] = value;
  }

  for (const s of sections) {
    // A disabled plugin's keys keep their defaults, so that what other plugins read of them means what it always did.
    if (!s.enabled) Object.assign(config, Value.Default(s.schema, {}));
    else Object.assign(config, validateSection(s.schema, raw.get(s)!, origin.get(s)!, `${s.name}.`));
  }
  source.unclaimed = unclaimed;
  const warnings: string[] = [];
  if (moved.length) warnings.push(`${file}: top-level keys that now belong to a plugin's section, read as before (move them into the section): ${moved.join(', ')}`);
  for (const [s, what] of ignored) warnings.push(`plugin ${s.name} is not enabled: its configuration is ignored (${what.join(', ')})`);
  return warnings;
}

/** Throws for the file's top-level keys nobody declares (after the providers took theirs). */
export function refuseUnknown(config: BerthConfig): void {
  const source = sourceOf(config);
  const key = Object.keys(source.unclaimed ?? {}).find(k => k in source.entries);
  if (key) throw new ConfigError(`Invalid configuration: unknown key "${key}" in ${source.file}`);
}
