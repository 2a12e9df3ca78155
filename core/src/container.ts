// The awilix container: the kernel's services and whatever plugins register. Plugins find
// each other's services here, never through each other's files.
import { createContainer, InjectionMode, type AwilixContainer } from 'awilix';
import type { MikroORM, EntityManager } from '@mikro-orm/postgresql';
import type { PoolConfig } from 'pg';
import type { BerthConfig } from './config.ts';
import type { Clock } from './clock.ts';
import type { SecretBox } from './crypto.ts';
import type { OutboundGuard } from './outbound.ts';
import type { EnvironmentDirectory, ProjectDirectory } from './contracts/projects.ts';
import type { EventBus } from './events.ts';

export interface Logger {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
}

/**
 * Everything the container can hand out. Plugins extend it by declaration merging, and so do the
 * kernel's own services in their modules (the caller and the procedures: procedure.ts; accounts,
 * sessions and API keys: identity/; the job scheduler: jobs.ts), so that this file imports none of them.
 */
export interface Cradle {
  config: BerthConfig;
  logger: Logger;
  /** The time as services read it (a test may register its own). */
  clock: Clock;
  orm: MikroORM;
  /** A unit of work for the current request (request scope only). */
  em: EntityManager;
  secrets: SecretBox;
  /** The check on every address a user gives Berth to connect to (outboundAllow). */
  outbound: OutboundGuard;
  events: EventBus;
  /** Where the platform's records are: node-postgres connection settings (the operator's database or the embedded one). */
  database: { pool: PoolConfig; embedded: boolean };
  /** The generated OpenAPI document (without the error responses; see transport/openapi.ts). */
  openapi: () => object;
  /** From the project plugin. */
  projects: ProjectDirectory;
  /** From the environment plugin. */
  environments: EnvironmentDirectory;
}

export type BerthContainer = AwilixContainer<Cradle>;

/**
 * A service another plugin provides, or undefined when that plugin is disabled. Only the
 * lookup is guarded: errors of the service's own calls still reach the caller.
 */
export function optionalService<K extends keyof Cradle>(cradle: Cradle, name: K): Cradle[K] | undefined {
  try {
    return cradle[name];
  } catch {
    return undefined;
  }
}

export const newContainer = (): BerthContainer => createContainer<Cradle>({ injectionMode: InjectionMode.PROXY, strict: true });
