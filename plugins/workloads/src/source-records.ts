// The records service of a workload kind built from a source (application, compose, a third
// party's): how a change applies its keys, the settings with their defaults, the secret its push
// deliveries are signed with, its status and the lookups the registry asks for. A kind adds its
// views, its sealed values and its list for environments.
import type { EntityManager, EnvironmentDirectory, SecretBox } from '@berth/core';
import type { WorkloadRef } from './registry.ts';
import { WorkloadChanges, type ChangeableWorkload } from './changes.ts';
import type { GitSourceRules } from './git-source.ts';
import { recordLookups, type WorkloadRecord } from './records.ts';

/** A kind's table as its records service reads it. */
export interface SourceKindTable<Row, SettingKey extends string> {
  /** The kind's name on the wire. */
  kind: string;
  entity: unknown;
  /** Its id's key (never changed by a change). */
  idField: keyof Row & string;
  /** The column holding its status (running, done, idle, error). */
  statusField: string;
  /** The keys kept in its columns. */
  columns: readonly string[];
  /** The keys kept in its settings JSON. */
  settings: readonly SettingKey[];
  /** Its settings' defaults (a fresh object each time). */
  defaults: () => Record<SettingKey, unknown>;
}

export abstract class SourceRecords<Row extends ChangeableWorkload & WorkloadRecord, SettingKey extends string> {
  protected readonly secrets: () => SecretBox;
  readonly #defaults: () => Record<SettingKey, unknown>;
  protected readonly lookups: ReturnType<typeof recordLookups<Row>>;

  /** How a change applies its keys (the workload kit's, with this kind's columns and settings; a connection field is checked with the git provider connections, whose plugin may be disabled). */
  readonly changes: WorkloadChanges<Row>;

  constructor(table: SourceKindTable<Row, SettingKey>, secrets: () => SecretBox, environments: () => EnvironmentDirectory, gitConnections: () => GitSourceRules | undefined = () => undefined) {
    this.secrets = secrets;
    this.#defaults = table.defaults;
    this.changes = new WorkloadChanges<Row>({ columns: table.columns, settings: table.settings, idField: table.idField }, { secrets, environments, git: gitConnections });
    this.lookups = recordLookups<Row>(table.entity, table.idField, table.kind, table.statusField);
  }

  /** The secret its push deliveries must be signed with (null: none). */
  webhookSecretOf(row: Row): string | null {
    return row.webhookSecret ? this.secrets().decrypt(row.webhookSecret) : null;
  }

  settingsOf(row: Row): Record<SettingKey, unknown> {
    return { ...this.#defaults(), ...row.settings } as Record<SettingKey, unknown>;
  }

  // ------------------------------------------------------------ for the registry and other plugins
  // Arrow functions: other plugins are handed them on their own.
  readonly ref = (row: Row): WorkloadRef => this.lookups.ref(row);
  readonly findRef = (id: string, em: EntityManager): Promise<WorkloadRef | null> => this.lookups.findRef(id, em);
  readonly findByAppName = (appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null> => this.lookups.findByAppName(appName, serverId, em);
  readonly inEnvironments = (environmentIds: string[], em: EntityManager): Promise<WorkloadRef[]> => this.lookups.inEnvironments(environmentIds, em);
  readonly setStatus = (id: string, status: string, em: EntityManager): Promise<void> => this.lookups.setStatus(id, status, em);
}
