// The awilix container: the kernel's services and whatever plugins register. Plugins find
// each other's services here, never through each other's files.
import { createContainer, InjectionMode, type AwilixContainer } from 'awilix';
import type { MikroORM, EntityManager } from '@mikro-orm/postgresql';
import type { PoolConfig } from 'pg';
import type { BerthConfig } from './config.ts';
import type { Clock } from './clock.ts';
import type { SecretBox } from './crypto.ts';
import type { AccountService } from './identity/accounts.ts';
import type { OutboundGuard } from './outbound.ts';
import type { SessionService } from './identity/sessions.ts';
import type { ApiKeyService } from './identity/api-keys.ts';
import type { ProcedureRegistry, Principal } from './procedure.ts';
import type { EnvironmentDirectory, ProjectDirectory } from './contracts/projects.ts';
import type { JobScheduler } from './jobs.ts';
import type { EventBus } from './events.ts';

export interface Logger {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
}

/** Everything the container can hand out. Plugins extend it by declaration merging. */
export interface Cradle {
  config: BerthConfig;
  logger: Logger;
  /** The time as services read it (a test may register its own). */
  clock: Clock;
  orm: MikroORM;
  /** A unit of work for the current request (request scope only). */
  em: EntityManager;
  /** The caller of the current request (request scope only). */
  principal: Principal | null;
  secrets: SecretBox;
  /** Whether the first admin exists, who the instance owner is (the user and organization plugins manage accounts). */
  accounts: AccountService;
  /** The check on every address a user gives Berth to connect to (outboundAllow). */
  outbound: OutboundGuard;
  /** The credential check and the sessions a login opens. */
  sessions: SessionService;
  apiKeys: ApiKeyService;
  registry: ProcedureRegistry;
  jobs: JobScheduler;
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
