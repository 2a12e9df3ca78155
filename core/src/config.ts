// The operator's configuration: one TypeBox schema, values from berth.config.json
// (path in BERTH_CONFIG) overlaid by environment variables, validated before listen.
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import Type, { type Static } from 'typebox';
import { Value } from 'typebox/value';

/** One provider's entry: false disables a built-in; an object enables it with options, or loads a third party's from `resolve`. */
const ProviderEntry = Type.Union([
  Type.Boolean(),
  Type.Object({
    resolve: Type.Optional(Type.String({ minLength: 1, description: 'A third party\'s provider: a path (relative to the config file) or a package name' })),
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Checked against the provider\'s own options schema at boot' })),
  }, { additionalProperties: false }),
]);
export const ProvidersSchema = Type.Record(
  Type.String({ pattern: '^[a-z][a-z0-9]*$' }),
  Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]*$' }), ProviderEntry, { additionalProperties: false }),
  { additionalProperties: false, default: {}, description: 'Providers per contract (builder, source, database...) by id, over the built-in ones, which are all enabled unless set to false (env BERTH_PROVIDERS, JSON)' },
);
export type ProvidersConfig = Static<typeof ProvidersSchema>;

export const ConfigSchema = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'TCP port of the HTTP API (env PORT)' }),
  host: Type.String({ minLength: 1, default: '0.0.0.0', description: 'Address to listen on (env HOST)' }),
  dataDir: Type.String({ minLength: 1, default: './data', description: 'Where Berth keeps its data, the embedded database and its secret (env BERTH_DATA_DIR)' }),
  databaseUrl: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'External PostgreSQL; absent = the embedded PostgreSQL, a server Berth runs on a cluster in dataDir (env DATABASE_URL)' })),
  plugins: Type.Optional(Type.Array(Type.String({ pattern: '^[a-z][a-z0-9-]*$' }), { description: 'Built-in plugins to enable; absent = all of them (env BERTH_PLUGINS, comma-separated)' })),
  extraPlugins: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'Third-party plugins: paths or package names (env BERTH_EXTRA_PLUGINS, comma-separated)' }),
  providers: ProvidersSchema,
  secret: Type.Optional(Type.String({ minLength: 32, description: 'Key material for secrets at rest; absent = generated into dataDir/secret.key (env BERTH_SECRET)' })),
  logLevel: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info', description: 'env BERTH_LOG_LEVEL' }),
  bodyLimit: Type.Integer({ minimum: 1024, default: 1048576, description: 'Largest accepted request body in bytes (env BERTH_BODY_LIMIT)' }),
  publicUrl: Type.Optional(Type.String({ format: 'uri', description: 'Address clients use, for the OpenAPI server entry (env BERTH_PUBLIC_URL)' })),
  dbPoolSize: Type.Integer({ minimum: 1, maximum: 100, default: 5, description: 'Connections in the ORM pool (env BERTH_DB_POOL)' }),
  jobs: Type.Boolean({ default: true, description: 'Run the job scheduler in this process (env BERTH_JOBS)' }),
  checkResponses: Type.Boolean({ default: false, description: 'Check every reply against its declared output schema; a mismatch is a 500 (tests turn it on; env BERTH_CHECK_RESPONSES)' }),
  swarmAdvertiseAddr: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Address the local engine advertises when Berth initialises swarm mode (env BERTH_SWARM_ADVERTISE_ADDR)' }),
  platformNetwork: Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}$', default: 'berth-network', description: 'The overlay network every workload and the proxy join (the peer\'s is dokploy-network); changing it on an instance with workloads is refused at boot (env BERTH_PLATFORM_NETWORK)' }),
  deployConcurrency: Type.Integer({ minimum: 1, maximum: 32, default: 1, description: 'Deployments that run at once per host; one workload\'s deployments always run in order (env BERTH_DEPLOY_CONCURRENCY)' }),
  deploySettleSeconds: Type.Number({ minimum: 0, maximum: 300, default: 2, description: 'How long a new task must keep running before a deployment is done: a container that exits at once fails the deploy instead of passing it; 0 = done as soon as Swarm reports the task running (env BERTH_DEPLOY_SETTLE)' }),
  deployTimeoutSeconds: Type.Integer({ minimum: 1, default: 1800, description: 'Hard limit of one deployment job, build included; past it the job is stopped and marked error (env BERTH_DEPLOY_TIMEOUT)' }),
  deploymentsKept: Type.Integer({ minimum: 1, maximum: 1000, default: 10, description: 'Deployments (records and logs) kept per workload; older ones are removed (env BERTH_DEPLOYMENTS_KEPT)' }),
  staticImage: Type.String({ minLength: 1, default: 'nginx:alpine', description: 'Web-server image of the static builder: it serves the files copied to /usr/share/nginx/html unless staticRoot says otherwise (env BERTH_STATIC_IMAGE)' }),
  staticRoot: Type.String({ pattern: '^/[A-Za-z0-9._/-]*$', default: '/usr/share/nginx/html', description: 'Directory inside staticImage that the web server serves (env BERTH_STATIC_ROOT)' }),
  backupVerify: Type.Enum(['always', 'schedule', 'never'], { default: 'always', description: 'Prove backups restorable: restore a file into a throwaway container of the same kind and record the driver\'s check with it — after each backup (always), or on backupVerifySchedule for each backup\'s newest file not checked yet (schedule) (env BERTH_BACKUP_VERIFY)' }),
  backupVerifySchedule: Type.String({ minLength: 1, maxLength: 100, default: '0 4 * * 0', description: 'With backupVerify "schedule": when the newest unchecked file of each backup is restored into a throwaway container (cron, 5 or 6 fields; default Sundays at 04:00) (env BERTH_BACKUP_VERIFY_SCHEDULE)' }),
  backupTickSeconds: Type.Integer({ minimum: 1, maximum: 3600, default: 60, description: 'How often backup schedules are checked; a backup runs at the first check after its cron time (env BERTH_BACKUP_TICK)' }),
  backupPassphrase: Type.Optional(Type.String({ minLength: 16, maxLength: 1024, description: 'Passphrase that encrypts the archive of Berth\'s own data (web-server backups: its database and the data directory\'s keys); never logged, never stored; absent = no web-server backups (env BERTH_BACKUP_PASSPHRASE)' })),
  backupHelperImage: Type.String({ minLength: 1, maxLength: 255, default: 'berth-test/busybox:1', description: 'Image of the helper container that copies a volume out and back (volume backups and restores): it must be on the host (never pulled) and have `find`; any busybox or Debian image does (env BERTH_BACKUP_HELPER_IMAGE)' }),
  hostAccess: Type.Object({
    bindMountRoots: Type.Array(Type.String({ pattern: '^/' }), { default: [], description: 'Host directories below which the instance owner may bind mount (symlinks resolved; never Berth\'s data or install directory or a parent of them); empty = no bind mounts' }),
    hostNetworks: Type.Boolean({ default: false, description: 'Let the instance owner attach workloads to the host, ingress and none networks' }),
    localGit: Type.Boolean({ default: false, description: 'Let the instance owner deploy git repositories of this host (file:// URLs and paths)' }),
  }, { default: {}, additionalProperties: false, description: 'What workloads may reach of the host: off unless granted, and then only to the instance owner (env BERTH_HOST_ACCESS, JSON)' }),
  proxy: Type.String({ pattern: '^[a-z][a-z0-9_]*$', default: 'caddy', description: 'The proxy provider in front of workloads\' domains: caddy, traefik, none (= domains are stored, nothing serves them) or a third party\'s id from providers.proxy (env BERTH_PROXY)' }),
  proxyImage: Type.Optional(Type.String({ minLength: 1, description: 'Image of the proxy service; absent = the provider\'s default (caddy:2.6, traefik:v3.5) (env BERTH_PROXY_IMAGE)' })),
  proxyHttpPort: Type.Integer({ minimum: 1, maximum: 65535, default: 80, description: 'Host port of the proxy\'s plain-http entry point, published in host mode (env BERTH_PROXY_HTTP_PORT)' }),
  proxyHttpsPort: Type.Integer({ minimum: 1, maximum: 65535, default: 443, description: 'Host port of the proxy\'s https entry point, published in host mode (env BERTH_PROXY_HTTPS_PORT)' }),
  serverIp: Type.Optional(Type.String({ minLength: 1, description: 'The public address of this server: generated domains point at it and the preflight expects hosts to resolve to it (env BERTH_SERVER_IP)' })),
  generatedDomainBase: Type.String({ pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$', default: 'sslip.io', description: 'Wildcard-DNS base of generated domains: <appName>-<random>-<ip with dashes>.<base> (env BERTH_GENERATED_DOMAIN_BASE)' }),
  templatesSource: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'The compose template catalog: a directory or an http(s) URL in the peer\'s template format; absent = the repository\'s examples/templates (env BERTH_TEMPLATES)' })),
  dnsResolver: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F.:\\[\\]]+$', description: 'DNS server (address or address:port) the domain preflight asks; absent = the system\'s (env BERTH_DNS_RESOLVER)' })),
});
export type BerthConfig = Static<typeof ConfigSchema>;

type ConfigKey = keyof BerthConfig;
/** Which environment variable feeds which key. */
export const envNames: Record<ConfigKey, string> = {
  port: 'PORT',
  host: 'HOST',
  dataDir: 'BERTH_DATA_DIR',
  databaseUrl: 'DATABASE_URL',
  plugins: 'BERTH_PLUGINS',
  extraPlugins: 'BERTH_EXTRA_PLUGINS',
  providers: 'BERTH_PROVIDERS',
  secret: 'BERTH_SECRET',
  logLevel: 'BERTH_LOG_LEVEL',
  bodyLimit: 'BERTH_BODY_LIMIT',
  publicUrl: 'BERTH_PUBLIC_URL',
  dbPoolSize: 'BERTH_DB_POOL',
  jobs: 'BERTH_JOBS',
  checkResponses: 'BERTH_CHECK_RESPONSES',
  swarmAdvertiseAddr: 'BERTH_SWARM_ADVERTISE_ADDR',
  platformNetwork: 'BERTH_PLATFORM_NETWORK',
  deployConcurrency: 'BERTH_DEPLOY_CONCURRENCY',
  deployTimeoutSeconds: 'BERTH_DEPLOY_TIMEOUT',
  deploySettleSeconds: 'BERTH_DEPLOY_SETTLE',
  deploymentsKept: 'BERTH_DEPLOYMENTS_KEPT',
  staticImage: 'BERTH_STATIC_IMAGE',
  staticRoot: 'BERTH_STATIC_ROOT',
  backupVerify: 'BERTH_BACKUP_VERIFY',
  backupVerifySchedule: 'BERTH_BACKUP_VERIFY_SCHEDULE',
  backupTickSeconds: 'BERTH_BACKUP_TICK',
  backupPassphrase: 'BERTH_BACKUP_PASSPHRASE',
  backupHelperImage: 'BERTH_BACKUP_HELPER_IMAGE',
  hostAccess: 'BERTH_HOST_ACCESS',
  proxy: 'BERTH_PROXY',
  proxyImage: 'BERTH_PROXY_IMAGE',
  proxyHttpPort: 'BERTH_PROXY_HTTP_PORT',
  proxyHttpsPort: 'BERTH_PROXY_HTTPS_PORT',
  serverIp: 'BERTH_SERVER_IP',
  generatedDomainBase: 'BERTH_GENERATED_DOMAIN_BASE',
  dnsResolver: 'BERTH_DNS_RESOLVER',
  templatesSource: 'BERTH_TEMPLATES',
};

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const listKeys = new Set<ConfigKey>(['plugins', 'extraPlugins']);
const jsonKeys = new Set<ConfigKey>(['providers', 'hostAccess']);

function parseJsonEnv(name: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch (e) {
    throw new ConfigError(`Invalid configuration: ${name} must be JSON: ${(e as Error).message}`);
  }
}

/**
 * Reads the file (if any) and the environment, applies defaults and validates.
 * `overrides` win over both (tests and embedding programs use it).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<BerthConfig> = {}): BerthConfig {
  const raw: Record<string, unknown> = {};
  const origin: Record<string, string> = {};
  const file = env.BERTH_CONFIG ?? (existsSync('berth.config.json') ? 'berth.config.json' : undefined);
  let baseDir = process.cwd();
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
    baseDir = path.dirname(path.resolve(file));
    for (const [k, v] of Object.entries(parsed)) {
      if (!(k in ConfigSchema.properties)) throw new ConfigError(`Invalid configuration: unknown key "${k}" in ${file}`);
      raw[k] = v;
      origin[k] = `"${k}" in ${file}`;
    }
  }
  for (const key of Object.keys(envNames) as ConfigKey[]) {
    const value = env[envNames[key]];
    if (value === undefined || value === '') continue;
    raw[key] = listKeys.has(key) ? value.split(',').map(s => s.trim()).filter(Boolean) : jsonKeys.has(key) ? parseJsonEnv(envNames[key], value) : value;
    origin[key] = envNames[key];
  }
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) continue;
    raw[k] = v;
    origin[k] = k;
  }
  const withDefaults = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw)) as Record<string, unknown>;
  const errors = [...Value.Errors(ConfigSchema, withDefaults)];
  if (errors.length) {
    const e = errors[0]!;
    const key = e.instancePath.split('/')[1] ?? (e.params as { requiredProperties?: string[] }).requiredProperties?.[0] ?? '?';
    const where = origin[key] ?? key;
    // Inside a nested key (providers.builder.static...), say where.
    const inner = e.instancePath.split('/').slice(2).join('.');
    // A key a record's key pattern refuses fails as "schema is false": say what it is.
    const message = e.message === 'schema is false' ? 'is not an allowed name (lower-case letters and digits; ids may have _)' : e.message;
    throw new ConfigError(`Invalid configuration: ${where}${inner ? ` at ${key}.${inner}` : ''} ${message}${key in raw && !inner ? ` (got ${JSON.stringify(raw[key])})` : ''}`);
  }
  const config = withDefaults as BerthConfig;
  // Paths in the file are relative to the file; in the environment, to the working directory.
  config.dataDir = path.resolve(origin.dataDir?.startsWith('"') ? baseDir : process.cwd(), config.dataDir);
  config.extraPlugins = config.extraPlugins.map(p =>
    p.startsWith('.') || p.startsWith('/') ? path.resolve(origin.extraPlugins?.startsWith('"') ? baseDir : process.cwd(), p) : p);
  const providersBase = origin.providers?.startsWith('"') ? baseDir : process.cwd();
  for (const entries of Object.values(config.providers)) {
    for (const entry of Object.values(entries)) {
      if (typeof entry === 'object' && entry.resolve && entry.resolve.startsWith('.')) entry.resolve = path.resolve(providersBase, entry.resolve);
    }
  }
  return config;
}
