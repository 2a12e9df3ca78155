// A change of a workload built from a source (application, compose, a third party's kind), key by
// key, as every such kind applies it: its environment (of the organization), its appName (free on
// its host), its host (kept: a workload stays where it was made), its webhook secret (sealed), its
// columns, the kind's own keys (sealed values, references it checks), its git source (a
// connection field checked, every forge's fields kept, the rule of who may change it) and the rest
// of its settings. The kind names its columns and settings; the rest is the same for all.
import { invalidField, type EntityManager, type EnvironmentDirectory, type Principal, type SecretBox } from '@berth/core';
import { GitSourceChange, type GitSourceRules } from './git-source.ts';

/** The registry's appName check (WorkloadRegistry.assertAppNameFree). */
export type AssertAppNameFree = (appName: string, serverId: string | null, em: EntityManager, self?: string) => Promise<void>;

/** What a change reads and writes of every such kind's record. */
export interface ChangeableWorkload {
  environmentId: string;
  appName: string;
  serverId?: string | null;
  sourceType: string;
  webhookSecret?: string | null;
  settings: Record<string, unknown>;
}

/** Who changes it, in which transaction, and the registry's appName check. */
export interface ChangeContext {
  organizationId: string;
  em: EntityManager;
  assertAppNameFree: AssertAppNameFree;
  caller?: Pick<Principal, 'userId' | 'role'>;
}

/** A key of the kind's own (sealed values, a reference it checks): true when it took the key. */
export type OwnKey = (key: string, value: unknown, settings: Record<string, unknown>) => boolean | Promise<boolean>;

export class WorkloadChanges<Row extends ChangeableWorkload> {
  readonly #columns: Set<string>;
  readonly #settings: Set<string>;
  readonly #idField: string;
  readonly #deps: { secrets: () => SecretBox; environments: () => EnvironmentDirectory; git: () => GitSourceRules | undefined };

  /** `columns` and `settings`: the kind's keys kept in its columns and in its settings JSON; `idField`: its id's key (never changed). */
  constructor(
    kind: { columns: readonly string[]; settings: readonly string[]; idField: keyof Row & string },
    deps: { secrets: () => SecretBox; environments: () => EnvironmentDirectory; git: () => GitSourceRules | undefined },
  ) {
    this.#columns = new Set(kind.columns);
    this.#settings = new Set(kind.settings);
    this.#idField = kind.idField;
    this.#deps = deps;
  }

  /** Applies `changes` (undefined values skipped) to the row, then flushes. */
  async apply(row: Row, changes: Record<string, unknown>, ctx: ChangeContext, own: OwnKey = () => false): Promise<void> {
    const { organizationId, em, caller } = ctx;
    const source = await GitSourceChange.begin(this.#deps.git(), { ...row.settings, sourceType: row.sourceType }, changes, { organizationId, em, caller });
    const settings = { ...row.settings };
    const id = String((row as unknown as Record<string, unknown>)[this.#idField]); // cast: the id column is the kind's, named by idField
    for (const [key, value] of Object.entries(changes)) {
      if (value === undefined || key === this.#idField || key === 'createdAt') continue;
      if (key === 'environmentId') {
        row.environmentId = (await this.#deps.environments().get(value as string, organizationId, em)).environmentId;
      } else if (key === 'appName') {
        if (value !== row.appName) await ctx.assertAppNameFree(value as string, row.serverId ?? null, em, id);
        row.appName = value as string;
      } else if (key === 'serverId') {
        // Moving a workload between hosts would leave its service and volumes behind: not done by an update.
        if (((value as string | null) || null) !== (row.serverId ?? null)) throw invalidField('serverId', 'a workload stays on the host it was created on: create it anew on the other server');
      } else if (key === 'webhookSecret') {
        row.webhookSecret = value ? this.#deps.secrets().encrypt(value as string) : null;
      } else if (this.#columns.has(key)) {
        (row as Record<string, unknown>)[key] = value;
      } else if (await own(key, value, settings)) {
        // the kind's own key, taken
      } else if (await source.connection(key, value, settings)) {
        // a connection field, checked and kept
      } else if (this.#settings.has(key) || source.isForgeField(key)) {
        settings[key] = value;
      }
    }
    row.settings = settings;
    await em.flush();
  }
}
