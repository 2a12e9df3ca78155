// The records of one database kind as the deployer, the workload kind and the host ports use them:
// their views, sealed credentials and settings, the status, the ports they hold, the list for
// environments, and the resolver other plugins find its databases through. Credentials and env
// are sealed on write; everything kind-specific comes from the driver. <kind>.* is requests.ts.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WorkloadRef } from '../registry.ts';
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

  constructor(driver: DatabaseDriver, secrets: () => SecretBox) {
    this.driver = driver;
    this.entity = databaseEntity(driver.kind);
    this.idKey = `${driver.kind}Id`;
    this.#secrets = secrets;
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
    const defaults = Object.fromEntries(Object.entries(settingFieldsOf(this.driver)).map(([k, [, d]]) => [k, structuredClone(d)]));
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
    const rows = (await em.find(this.entity, { externalPort: port, serverId })) as DatabaseRow[];
    return rows.map(r => ({ kind: this.driver.kind, id: r.id }));
  }

  async setStatus(id: string, status: string, em: EntityManager): Promise<void> {
    await em.nativeUpdate(this.entity, { id }, { applicationStatus: status });
  }

  ref(row: DatabaseRow): WorkloadRef {
    return { kind: this.driver.kind, id: row.id, organizationId: row.organizationId, environmentId: row.environmentId, appName: row.appName, name: row.name, serverId: row.serverId ?? null };
  }

  async findRef(id: string, em: EntityManager): Promise<WorkloadRef | null> {
    const row = (await em.findOne(this.entity, { id })) as DatabaseRow | null;
    return row ? this.ref(row) : null;
  }

  async findByAppName(appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null> {
    const row = (await em.findOne(this.entity, { appName, serverId })) as DatabaseRow | null;
    return row ? this.ref(row) : null;
  }

  async inEnvironments(environmentIds: string[], em: EntityManager): Promise<WorkloadRef[]> {
    const rows = (await em.find(this.entity, { environmentId: { $in: environmentIds } })) as DatabaseRow[];
    return rows.map(r => this.ref(r));
  }

  /** The kind's databases of the given environments (no credentials in lists). */
  async list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>> {
    const rows = (await em.find(this.entity, { environmentId: { $in: environmentIds } }, { orderBy: { createdAt: 'asc', id: 'asc' } as never })) as DatabaseRow[]; // cast: the entity is the kind's, chosen at run time
    const out = new Map<string, Record<string, unknown>[]>();
    for (const row of rows) {
      const { databasePassword: _p, databaseRootPassword: _r, env: _e, ...rest } = this.view(row, false);
      if (!out.has(row.environmentId)) out.set(row.environmentId, []);
      out.get(row.environmentId)!.push(rest);
    }
    return out;
  }
}
