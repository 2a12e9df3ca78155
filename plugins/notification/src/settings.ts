// The plugin's own configuration keys, each with its env variable (`env`), as a TypeBox schema,
// and the one function that reads them. Until the kernel validates plugin schemas itself, the
// values come from the config file's keys of the same name or the env variables.
import { ConfigError, Type, type BerthConfig, type Static } from '@berth/core';
import { Value } from 'typebox/value';

export const NotifyConfigSchema = Type.Object({
  notifyTimeoutSeconds: Type.Integer({ env: 'BERTH_NOTIFY_TIMEOUT', default: 10, minimum: 1, maximum: 300, description: 'How long one send may take before it counts as a failed try (env BERTH_NOTIFY_TIMEOUT)' }),
  notifyMaxTries: Type.Integer({ env: 'BERTH_NOTIFY_MAX_TRIES', default: 5, minimum: 1, maximum: 50, description: 'Tries of one delivery before it is given up as dead (env BERTH_NOTIFY_MAX_TRIES); 10 s after the first failure, doubling' }),
});
export type NotifyConfig = Static<typeof NotifyConfigSchema>;

/** The first retry waits this long; each next one twice the previous. */
export const FIRST_BACKOFF_MS = 10_000;

/** The keys from the config (a key of the same name) or the environment; a bad value names its key and variable. */
export function notifyConfig(config: BerthConfig, env: NodeJS.ProcessEnv = process.env): NotifyConfig {
  const given: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(NotifyConfigSchema.properties) as unknown as [keyof NotifyConfig, { env: string; minimum: number; maximum: number }][]) {
    const fromConfig = (config as unknown as Record<string, unknown>)[key];
    const raw = fromConfig ?? env[schema.env];
    if (raw === undefined || raw === '') continue;
    const value = typeof raw === 'string' ? Number(raw) : raw;
    if (!Value.Check(NotifyConfigSchema.properties[key], value)) {
      throw new ConfigError(`Invalid configuration: ${key} (env ${schema.env}) must be a whole number within ${schema.minimum}..${schema.maximum}, got ${JSON.stringify(raw)}`);
    }
    given[key] = value;
  }
  return Value.Default(NotifyConfigSchema, given) as NotifyConfig;
}

/** How long a delivery waits after its n-th failed try (n ≥ 1): 10 s, 20 s, 40 s… */
export const backoffMs = (tries: number) => FIRST_BACKOFF_MS * 2 ** (Math.max(1, tries) - 1);
