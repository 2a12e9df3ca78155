// The operator's configuration. The kernel's own keys are declared here; every plugin declares
// its keys in a section schema of its own package, and every provider in its options schema. A
// key's environment variable is named once, by the schema annotation `env`; the variable table is
// derived from the annotations. Values come from berth.config.json (path in BERTH_CONFIG),
// overlaid by the environment, and are validated before anything starts.
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import Type, { type Static, type TObject, type TSchema } from 'typebox';
import { Value } from 'typebox/value';

/** One provider's entry: false disables a built-in; an object enables it with options, or loads a third party's from `resolve`. */
const ProviderEntry = Type.Union([
  Type.Boolean(),
  Type.Object(
    {
      resolve: Type.Optional(Type.String({ minLength: 1, description: "A third party's provider: a path (relative to the config file) or a package name" })),
      options: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "Checked against the provider's own options schema at boot" })),
    },
    { additionalProperties: false },
  ),
]);
export const ProvidersSchema = Type.Record(Type.String({ pattern: '^[a-z][a-z0-9]*$' }), Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]*$' }), ProviderEntry, { additionalProperties: false }), {
  env: 'BERTH_PROVIDERS',
  additionalProperties: false,
  default: {},
  description: 'Providers per contract (builder, source, database...) by id, over the built-in ones, which are all enabled unless set to false (JSON in the environment)',
});
export type ProvidersConfig = Static<typeof ProvidersSchema>;

/** The kernel's keys, and only those: each plugin and provider declares its own. */
export const KernelConfig = Type.Object({
  port: Type.Integer({ env: 'PORT', minimum: 0, maximum: 65535, default: 3000, description: 'TCP port of the HTTP API' }),
  host: Type.String({ env: 'HOST', minLength: 1, default: '0.0.0.0', description: 'Address to listen on' }),
  dataDir: Type.String({
    env: 'BERTH_DATA_DIR',
    minLength: 1,
    default: './data',
    description: "Where Berth keeps its data, the embedded database and its secret; keep its path under about 80 characters (the embedded server's Unix socket lives in it)",
  }),
  databaseUrl: Type.Optional(
    Type.String({ env: 'DATABASE_URL', pattern: '^postgres(ql)?://', description: 'External PostgreSQL; absent = the embedded PostgreSQL, a server Berth runs on a cluster in dataDir' }),
  ),
  plugins: Type.Optional(
    Type.Array(Type.String({ pattern: '^[a-z][a-z0-9-]*$' }), { env: 'BERTH_PLUGINS', description: 'Built-in plugins to enable; absent = all of them (comma-separated in the environment)' }),
  ),
  extraPlugins: Type.Array(Type.String({ minLength: 1 }), { env: 'BERTH_EXTRA_PLUGINS', default: [], description: 'Third-party plugins: paths or package names (comma-separated in the environment)' }),
  providers: ProvidersSchema,
  secret: Type.Optional(Type.String({ env: 'BERTH_SECRET', minLength: 32, description: 'Key material for secrets at rest; absent = generated into dataDir/secret.key' })),
  logLevel: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { env: 'BERTH_LOG_LEVEL', default: 'info', description: 'Least severe log line written' }),
  bodyLimit: Type.Integer({ env: 'BERTH_BODY_LIMIT', minimum: 1024, default: 1048576, description: 'Largest accepted request body in bytes; larger ones get 413' }),
  uploadLimit: Type.Integer({
    env: 'BERTH_UPLOAD_LIMIT',
    minimum: 1024,
    default: 104857600,
    description:
      "Largest file an upload procedure takes (a multipart/form-data body, such as docker.uploadFileToContainer's), in bytes; a larger one gets 413. Kept in dataDir/uploads while the request lasts",
  }),
  publicUrl: Type.Optional(Type.String({ env: 'BERTH_PUBLIC_URL', format: 'uri', description: 'Address clients use, for the OpenAPI server entry' })),
  dbPoolSize: Type.Integer({ env: 'BERTH_DB_POOL', minimum: 1, maximum: 100, default: 5, description: 'Connections in the ORM pool' }),
  jobs: Type.Boolean({ env: 'BERTH_JOBS', default: true, description: 'Run the job scheduler in this process' }),
  checkResponses: Type.Boolean({ env: 'BERTH_CHECK_RESPONSES', default: false, description: 'Check every reply against its declared output schema; a mismatch is a 500 (tests turn it on)' }),
  outboundAllow: Type.Array(Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s/@]+(/\\d{1,3})?$' }), {
    env: 'BERTH_OUTBOUND_ALLOW',
    default: [],
    description:
      "Addresses and CIDRs (IP, IP:port, 10.0.0.0/8; comma-separated in the variable) that URLs users give (notification channels and SMTP hosts, monitoring's urlCallback, git providers, registries, backup destinations, AI providers) may connect to for every organization although they are loopback, link-local, private or this machine's; by default those are refused, private ranges allowed to the instance operators' organization only. A host name entry (host[:port]) lets ai.getModels and ai.testConnection reach that host without a configuration, and never vouches for the addresses the name resolves to",
  }),
});
type KernelKeys = Static<typeof KernelConfig>;
/**
 * The effective configuration: the kernel's keys and every enabled plugin's, one flat object (a
 * key belongs to one package). Plugins add their keys to the type by declaration merging
 * (`declare module '@berth/core' { interface BerthConfig extends MySettings {} }`).
 */
export interface BerthConfig extends KernelKeys {}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Annotations a configuration schema may carry on a key besides JSON Schema's. */
interface KeyAnnotations {
  env?: string;
  formerly?: string;
}
const annotations = (schema: TSchema) => schema as TSchema & KeyAnnotations & { type?: string; anyOf?: unknown; default?: unknown; description?: string };

/** Each key of an object schema with its `env` variable, as the annotations say: the variable table. */
export function envTable(schema: TObject): { key: string; env: string }[] {
  return Object.entries(schema.properties).flatMap(([key, s]) => {
    const env = annotations(s as TSchema).env;
    return env ? [{ key, env }] : [];
  });
}

/** An environment variable's text as the value its key's schema takes: lists are comma-separated, objects JSON. */
export function envValue(schema: TSchema, name: string, text: string): unknown {
  const s = annotations(schema);
  if (s.type === 'array')
    return text
      .split(',')
      .map(v => v.trim())
      .filter(Boolean);
  if (s.type === 'object' || s.anyOf) {
    try {
      return JSON.parse(text);
    } catch (e) {
      throw new ConfigError(`Invalid configuration: ${name} must be JSON: ${(e as Error).message}`);
    }
  }
  return text;
}

/** What a value was read from, for error messages that name it. */
type Origin = Record<string, string>;

/** The first error of `value` against `schema` as a ConfigError naming where the key came from and its variable. */
function refuse(schema: TObject, value: Record<string, unknown>, raw: Record<string, unknown>, origin: Origin, prefix: string): never {
  const e = [...Value.Errors(schema, value)][0]!;
  const key = e.instancePath.split('/')[1] ?? (e.params as { requiredProperties?: string[] }).requiredProperties?.[0] ?? '?';
  const env = annotations((schema.properties[key] ?? {}) as TSchema).env;
  const named = `${prefix}${key}`;
  const where = origin[key] ?? (env ? `${named} (env ${env})` : named);
  const inner = e.instancePath.split('/').slice(2).join('.');
  // A key a record's key pattern refuses fails as "schema is false": say what it is.
  const message = e.message === 'schema is false' ? 'is not an allowed name (lower-case letters and digits; ids may have _)' : e.message;
  throw new ConfigError(`Invalid configuration: ${where}${inner ? ` at ${named}.${inner}` : ''} ${message}${key in raw && !inner ? ` (got ${JSON.stringify(raw[key])})` : ''}`);
}

/** Converts, defaults and validates one schema's values; throws naming the key and its variable. */
export function validateSection(schema: TObject, raw: Record<string, unknown>, origin: Origin, prefix = ''): Record<string, unknown> {
  const value = Value.Default(schema, Value.Convert(schema, structuredClone(raw))) as Record<string, unknown>;
  if (!Value.Check(schema, value)) refuse(schema, value, raw, origin, prefix);
  return value;
}

/** Where the values that are not the kernel's came from, kept for the plugin sections and the providers. */
export interface ConfigSource {
  /** The file's name, if one was read. */
  file?: string;
  /** Its top-level entries that are not kernel keys: sections, and keys written there before they moved into sections. */
  entries: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
  /** Values a program passed (tests, embedding programs), by key, over everything else. */
  overrides: Record<string, unknown>;
  /** Top-level keys and overrides no plugin section declares (set by applySections; providers take theirs). */
  unclaimed?: Record<string, unknown>;
}
const sources = new WeakMap<object, ConfigSource>();
/** The source of a configuration loadConfig made. */
export const sourceOf = (config: BerthConfig): ConfigSource => sources.get(config) ?? { entries: {}, env: {}, overrides: {} };

/**
 * Reads the file (if any) and the environment, applies the kernel's defaults and validates its
 * keys. `overrides` win over both (tests and embedding programs use it). The other entries are
 * kept (sourceOf) for the plugin sections (sections.ts) and the providers.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<BerthConfig> = {}): BerthConfig {
  const raw: Record<string, unknown> = {};
  const origin: Origin = {};
  const source: ConfigSource = { entries: {}, env, overrides: {} };
  const file = env.BERTH_CONFIG ?? (existsSync('berth.config.json') ? 'berth.config.json' : undefined);
  let baseDir = process.cwd();
  const kernelKeys = KernelConfig.properties as Record<string, TSchema>;
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new ConfigError(`Invalid configuration: cannot read ${file}: ${(e as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError(`Invalid configuration: ${file} must hold a JSON object`);
    }
    source.file = file;
    baseDir = path.dirname(path.resolve(file));
    for (const [k, v] of Object.entries(parsed)) {
      if (!(k in kernelKeys)) {
        source.entries[k] = v;
        continue;
      }
      raw[k] = v;
      origin[k] = `"${k}" in ${file}`;
    }
  }
  for (const { key, env: name } of envTable(KernelConfig)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    raw[key] = envValue(kernelKeys[key]!, name, value);
    origin[key] = name;
  }
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) continue;
    if (!(k in kernelKeys)) {
      source.overrides[k] = v;
      continue;
    }
    raw[k] = v;
    origin[k] = k;
  }
  // cast: plugins extend BerthConfig; the kernel's keys are checked
  const config = validateSection(KernelConfig, raw, origin) as unknown as BerthConfig;
  // Paths in the file are relative to the file; in the environment, to the working directory.
  const base = (key: string) => (origin[key]?.startsWith('"') ? baseDir : process.cwd());
  config.dataDir = path.resolve(base('dataDir'), config.dataDir);
  config.extraPlugins = config.extraPlugins.map(p => (p.startsWith('.') || p.startsWith('/') ? path.resolve(base('extraPlugins'), p) : p));
  for (const entries of Object.values(config.providers)) {
    for (const entry of Object.values(entries)) {
      if (typeof entry === 'object' && entry.resolve && entry.resolve.startsWith('.')) entry.resolve = path.resolve(base('providers'), entry.resolve);
    }
  }
  sources.set(config, source);
  return config;
}
