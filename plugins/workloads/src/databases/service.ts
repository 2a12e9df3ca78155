// The records of one database kind as the deployer, the workload kind and the host ports use them:
// their views, sealed credentials and settings, the status, the ports they hold, the list for
// environments, and the resolver other plugins find its databases through. Credentials and env
// are sealed on write; everything kind-specific comes from the driver. <kind>.* is requests.ts.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WorkloadRef } from '../registry.ts';
import { recordLookups } from '../records.ts';
import { defaultsOf } from '../field-table.ts';
import { databaseEntity, type DatabaseRow } from './entity.ts';
import { settingFieldsOf } from './schemas.ts';
import { answerSwarmSettings } from '../swarm/settings.ts';
import type { DatabaseCredentials, DatabaseDriver, SecretBox } from '@berth/core';

export interface Sealed {
  databasePassword: string;
  databaseRootPassword: string | null;
  env: string | null;
}

const iso = (d: Date | string) => (d instanceof Date ? d.toISOString() : new Date(d).toISOString());

export class DatabaseService {
  readonly driver: DatabaseDriver;
  readonly entity: ReturnType<typeof databaseEntity>;
  readonly idKey: string;
  readonly #secrets: () => SecretBox;
  readonly #lookups: ReturnType<typeof recordLookups<DatabaseRow>>;

  constructor(driver: DatabaseDriver, secrets: () => SecretBox) {
    this.driver = driver;
    this.entity = databaseEntity(driver.kind);
    this.idKey = `${driver.kind}Id`;
    this.#secrets = secrets;
    this.#lookups = recordLookups<DatabaseRow>(this.entity, 'id', driver.kind, 'applicationStatus');
  }

  get label(): string {
    return this.driver.label;
  }

  sealedOf(row: DatabaseRow): Sealed {
    return JSON.parse(this.#secrets().decrypt(row.sealed)) as Sealed;
  }

  /** The sealed column holding these values. */
  seal(values: Sealed): string {
    return this.#secrets().encrypt(JSON.stringify(values));
  }

  settingsOf(row: DatabaseRow): Record<string, unknown> {
    const defaults = defaultsOf(settingFieldsOf(this.driver));
    // Records stored before the field took the peer's name keep their value.
    const { detachPlatformNetwork: former, ...settings } = row.settings as Record<string, unknown>;
    return { ...defaults, ...(former === undefined ? {} : { detachDokployNetwork: former }), ...settings };
  }

  credentialsOf(row: DatabaseRow): DatabaseCredentials {
    const sealed = this.sealedOf(row);
    return { databaseName: row.databaseName, databaseUser: row.databaseUser, databasePassword: sealed.databasePassword, databaseRootPassword: sealed.databaseRootPassword };
  }

  /** Every API field of the record (credentials only for `one`, never in lists). */
  view(row: DatabaseRow, withSecrets = true): Record<string, unknown> {
    const sealed = withSecrets ? this.sealedOf(row) : { databasePassword: '', databaseRootPassword: null, env: null };
    const { fields } = this.driver;
    return {
      [this.idKey]: row.id,
      name: row.name,
      appName: row.appName,
      description: row.description ?? null,
      ...(fields.databaseName ? { databaseName: row.databaseName ?? '' } : {}),
      ...(fields.databaseUser ? { databaseUser: row.databaseUser ?? '' } : {}),
      databasePassword: sealed.databasePassword,
      ...(fields.databaseRootPassword ? { databaseRootPassword: sealed.databaseRootPassword ?? '' } : {}),
      env: sealed.env ?? null,
      externalPort: row.externalPort ?? null,
      applicationStatus: row.applicationStatus,
      ...answerSwarmSettings(this.settingsOf(row)),
      environmentId: row.environmentId,
      serverId: row.serverId ?? null,
      organizationId: row.organizationId,
      createdAt: iso(row.createdAt),
    };
  }

  /** The databases of this kind holding the port on the host (as a HostPorts holder). */
  async portHolds(port: number, serverId: string | null, em: EntityManager): Promise<{ kind: string; id: string }[]> {
    const extra = Object.keys(this.driver.extraPorts ?? {});
    // Extra ports live in the settings column: the host's records of the kind are read and matched here.
    const rows = extra.length
      ? ((await em.find(this.entity, { serverId })) as DatabaseRow[]).filter(r => r.externalPort === port || extra.some(f => r.settings[f] === port))
      : ((await em.find(this.entity, { externalPort: port, serverId })) as DatabaseRow[]);
    return rows.map(r => ({ kind: this.driver.kind, id: r.id }));
  }

  setStatus(id: string, status: string, em: EntityManager): Promise<void> {
    return this.#lookups.setStatus(id, status, em);
  }

  ref(row: DatabaseRow): WorkloadRef {
    return this.#lookups.ref(row);
  }

  findRef(id: string, em: EntityManager): Promise<WorkloadRef | null> {
    return this.#lookups.findRef(id, em);
  }

  findByAppName(appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null> {
    return this.#lookups.findByAppName(appName, serverId, em);
  }

  inEnvironments(environmentIds: string[], em: EntityManager): Promise<WorkloadRef[]> {
    return this.#lookups.inEnvironments(environmentIds, em);
  }

  /** The kind's databases of the given environments (no credentials in lists). */
  list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>> {
    return this.#lookups.list(environmentIds, em, row => {
      const { databasePassword: _p, databaseRootPassword: _r, env: _e, ...rest } = this.view(row, false);
      return rest;
    });
  }
}
