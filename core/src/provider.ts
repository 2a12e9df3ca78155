// What a provider package exports: one descriptor (contract, id, TypeBox options schema,
// factory) made with defineProvider(). The provider loader imports only the enabled ones and
// registers each instance in the container as `<contract>.<id>`; plugins find them through
// the `providers` registry, which reads the container, never by importing a provider.
import type { Static, TSchema } from 'typebox';
import type { BerthConfig } from './config.ts';
import type { BerthContainer } from './container.ts';

/**
 * The contracts providers implement, by name, with the instance type each factory returns.
 * Contract files extend it by declaration merging (builder, source, database, ...).
 */
export interface ProviderContracts {}
export type ContractName = keyof ProviderContracts & string;

/** What a factory may use besides its options. */
export interface ProviderContext {
  /** The operator's configuration (dataDir, ...). */
  config: BerthConfig;
}

export interface ProviderDescriptor<C extends ContractName = ContractName, O extends TSchema = TSchema> {
  /** The contract it implements: "builder", "source", "database". */
  readonly contract: C;
  /** Its id within the contract: the wire value it serves (a build type, a source type, a database kind). */
  readonly id: string;
  /** Its options in the operator's config (`providers.<contract>.<id>.options`); defaults apply. */
  readonly options: O;
  /** Makes the instance from validated options. */
  create(options: Static<O>, context: ProviderContext): ProviderContracts[C] | Promise<ProviderContracts[C]>;
}

export const BERTH_PROVIDER = Symbol.for('berth.provider');
const ID = /^[a-z][a-z0-9_]*$/;

export function defineProvider<C extends ContractName, O extends TSchema>(descriptor: ProviderDescriptor<C, O>): ProviderDescriptor<C, O> {
  if (!ID.test(descriptor.id)) throw new Error(`Provider id "${descriptor.id}" must match ${ID}`);
  return Object.assign(descriptor, { [BERTH_PROVIDER]: true });
}

export function isProviderDescriptor(value: unknown): value is ProviderDescriptor {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BERTH_PROVIDER] === true;
}

/** The container name of a provider instance. */
export const providerName = (contract: string, id: string) => `${contract}.${id}`;

/** Which providers are enabled, per contract; instances are resolved from the container. */
export class ProviderRegistry {
  readonly #ids = new Map<string, string[]>();
  readonly #container: BerthContainer;

  constructor(container: BerthContainer) {
    this.#container = container;
  }

  /** Records an instance the loader registered as `<contract>.<id>`. */
  add(contract: string, id: string): void {
    const ids = this.#ids.get(contract) ?? [];
    if (ids.includes(id)) throw new Error(`Provider ${providerName(contract, id)} is enabled twice`);
    this.#ids.set(contract, [...ids, id]);
  }

  /** The enabled ids of a contract, in config order: the allowed values of its wire field. */
  ids(contract: ContractName): string[] {
    return [...(this.#ids.get(contract) ?? [])];
  }

  has(contract: ContractName, id: string): boolean {
    return this.#ids.get(contract)?.includes(id) ?? false;
  }

  /** The instance of `<contract>.<id>`; throws naming the enabled ones when it is not enabled. */
  get<C extends ContractName>(contract: C, id: string): ProviderContracts[C] {
    if (!this.has(contract, id)) {
      const enabled = this.ids(contract);
      throw new Error(`No ${contract} provider "${id}" is enabled (enabled: ${enabled.length ? enabled.join(', ') : 'none'})`);
    }
    return this.#container.resolve(providerName(contract, id)) as ProviderContracts[C];
  }

  /** The instance of `<contract>.<id>` when it is enabled, else undefined. */
  find<C extends ContractName>(contract: C, id: string): ProviderContracts[C] | undefined {
    return this.has(contract, id) ? this.get(contract, id) : undefined;
  }

  /** Every enabled instance of a contract, in config order. */
  all<C extends ContractName>(contract: C): ProviderContracts[C][] {
    return this.ids(contract).map(id => this.get(contract, id));
  }
}

declare module './container.ts' {
  interface Cradle {
    /** The enabled providers per contract (their instances are registered as `<contract>.<id>`). */
    providers: ProviderRegistry;
  }
}
