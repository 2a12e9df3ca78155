// What a plugin sees of the kernel, and the helper that makes a Berth plugin a proper
// Fastify plugin (fastify-plugin metadata: name, fastify range, dependencies, decorators),
// so a plugin enabled without what it needs fails at boot with a clear message.
import fp from 'fastify-plugin';
import type { TObject } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EntitySchema, MigrationObject } from '@mikro-orm/core';
import type { NameAndRegistrationPair } from 'awilix';
import type { BerthConfig } from './config.ts';
import type { PoolConfig } from 'pg';
import type { PersistenceServer } from './contracts/persistence-server.ts';
import type { ContractName, ProviderContracts } from './provider.ts';
import type { BerthContainer, Cradle } from './container.ts';
import type { Principal, Procedure, ProcedureFactory } from './procedure.ts';
import type { JobScheduler } from './jobs.ts';
import type { EventBus } from './events.ts';
import type { RecordOwner } from './record-owners.ts';

export interface BerthHost {
  readonly config: BerthConfig;
  readonly container: BerthContainer;
  readonly jobs: JobScheduler;
  readonly events: EventBus;
  /** Entity schemas this plugin stores (MikroORM defineEntity). */
  entities(...schemas: EntitySchema<any, any>[]): void;
  /** Migrations creating and evolving those tables; names start with Migration<yyyymmddhhmmss>. */
  migrations(...migrations: MigrationObject[]): void;
  /** The plugin's procedures, mounted on every transport; a factory runs once every plugin is set up (for schemas derived from registries). */
  procedures(...procedures: (Procedure<any, any> | ProcedureFactory)[]): void;
  /** Services offered to other plugins through the container. */
  provide(registrations: Partial<NameAndRegistrationPair<Cradle>> & NameAndRegistrationPair<any>): void;
  /** Runs once the database is migrated, before the server listens (e.g. recover interrupted work). */
  onStart(fn: (cradle: Cradle) => Promise<void> | void): void;
  /**
   * For each input field naming a record of the plugin that belongs to a service, environment or
   * project (`domainId`: its domain's service), how to find that owner: a member given records one
   * by one reaches the record only through its owner (404 otherwise). A field means the same on
   * every procedure; declaring one twice, or one the transport checks itself (applicationId…), stops the boot.
   */
  recordOwners(owners: Readonly<Record<string, RecordOwner>>): void;
  /** True when an operator command opened the kernel (no HTTP server will listen). */
  readonly headless: boolean;
  /**
   * Raw HTTP routes and hooks (e.g. a streamed reply), registered in the plugin's own Fastify
   * encapsulation context. Prefer procedures; use this only for what a procedure cannot answer.
   */
  http(routes: (app: FastifyInstance) => Promise<void> | void): void;
  /** The caller of a raw route, by the same credentials as every procedure; UNAUTHORIZED without one. */
  authenticate(req: FastifyRequest): Promise<Principal>;
}

declare module 'fastify' {
  interface FastifyInstance {
    berth: BerthHost;
  }
}

export interface PluginDefinition {
  /** Short name: the namespace, e.g. "project". The Fastify plugin is named berth-<name>. */
  name: string;
  /** The package version. */
  version: string;
  /** Other Berth plugins that must be registered first (short names). */
  dependencies?: string[];
  /**
   * Plugins whose services it uses when they are enabled and goes without otherwise (each lookup an
   * `optionalService`): not registered first, not required. Boot refuses a name that is no plugin;
   * test/layout.test.ts holds every optionalService lookup of a plugin to a service of one it
   * names here or in dependencies (or to a seam it declares itself, which another plugin fills).
   */
  uses?: string[];
  /**
   * The plugin's configuration keys: a TypeBox object schema, each key's environment variable
   * named by its `env` annotation. The operator writes them in the file's section named after the
   * plugin; boot validates them (defaults applied) into the configuration before any setup runs.
   */
  config?: TObject;
  /** Operator commands the plugin adds to `berth` (listed by `berth --help`). */
  commands?: PluginCommand[];
  setup(berth: BerthHost): void | Promise<void>;
}

/** An operator command: `berth <name> …`. It runs without the HTTP server, and opens the database only if it asks to. */
export interface PluginCommand {
  /** The word after `berth`, e.g. "restore". */
  name: string;
  /** Its usage, one or more lines starting with `berth <name>`. */
  usage: string;
  run(args: string[], context: CommandContext): Promise<void>;
}

export interface CommandContext {
  /** The environment the command runs in. */
  env: NodeJS.ProcessEnv;
  /** The configuration as `berth start` reads it (the kernel's keys and the enabled plugins' sections). */
  config: BerthConfig;
  /** Opens Berth without its HTTP server and jobs: the database (the embedded one started), migrated, every plugin set up. Stop it when done. */
  openKernel(options?: KernelOptions): Promise<Kernel>;
  /** One enabled built-in provider's instance, made without a kernel. */
  provider<C extends ContractName>(contract: C, id: string): Promise<ProviderContracts[C]>;
  /** Writes to the command's standard output. */
  out(text: string): void;
}

export const BERTH_PLUGIN = Symbol.for('berth.plugin');

export function definePlugin(def: PluginDefinition) {
  const plugin = fp(
    async (app: FastifyInstance) => {
      // fastify-plugin shares the root context; raw routes get a child context of their own.
      const berth: BerthHost = {
        ...app.berth,
        http: routes =>
          void app.register(async scope => {
            await routes(scope);
          }),
      };
      await def.setup(berth);
    },
    { name: `berth-${def.name}`, fastify: '5.x', decorators: { fastify: ['berth'] }, dependencies: (def.dependencies ?? []).map(d => `berth-${d}`) },
  );
  return Object.assign(plugin, {
    [BERTH_PLUGIN]: { name: def.name, version: def.version, dependencies: def.dependencies ?? [], uses: def.uses ?? [], ...(def.config ? { config: def.config } : {}), commands: def.commands ?? [] },
  });
}

export type BerthPlugin = ReturnType<typeof definePlugin>;
export interface PluginInfo {
  name: string;
  version: string;
  dependencies: string[];
  uses: string[];
  source: string;
  config?: TObject;
  commands: PluginCommand[];
}

/**
 * The kernel as plugins' operator commands get it (CommandContext.openKernel) and as kernel.ts makes
 * it (createKernel); declared here, with what a plugin sees, so that this file needs nothing of the
 * kernel's own.
 */
export interface Kernel {
  app: FastifyInstance;
  config: BerthConfig;
  container: BerthContainer;
  plugins: PluginInfo[];
  embedded: boolean;
  /** What the configuration's check warned about (logged at boot): keys moved into sections, keys of disabled plugins. */
  configWarnings: string[];
  /** Where the platform's records are: connection settings, and the embedded server if it is one. */
  database: { pool: PoolConfig; server?: PersistenceServer };
  /** Every route Fastify registered (the HEAD it adds beside each GET left out): procedures, their transports and the plugins' raw routes. */
  routes: readonly { method: string; url: string }[];
  /** Listens on config.host:config.port and starts the job scheduler. Returns the address. */
  listen(): Promise<string>;
  stop(): Promise<void>;
}

export interface KernelOptions {
  config?: Partial<BerthConfig>;
  env?: NodeJS.ProcessEnv;
  /** Skip the HTTP transports (operator commands that only need the services). */
  headless?: boolean;
  /**
   * The embedded database is gone for good (it died again after one restart). The kernel has
   * stopped serving; the default only logs, the operator command exits.
   */
  onDatabaseLost?: (error: Error) => void;
  /** The cradle's `reload` (settings.reloadServer). */
  onReload?: () => Promise<void>;
}
