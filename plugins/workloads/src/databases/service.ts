// The records of one database kind: create (both variants), read, change, search, list for
// environments, and the resolver other plugins find its databases through. Credentials and env
// are sealed on write; everything kind-specific comes from the driver.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WorkloadRef } from '../registry.ts';
import type { HostPorts } from '../host-ports.ts';
import { generateAppName } from '../naming.ts';
import Type from 'typebox';
import { databaseEntity, type DatabaseRow } from './entity.ts';
import { settingFieldsOf } from './schemas.ts';
import { dataVolumeOf } from './volumes.ts';
import { answerSwarmSettings } from '../swarm/settings.ts';
import { placementFor, searchFilters } from '../records.ts';
import { type DatabaseCredentials, type DatabaseDriver, type EnvironmentDirectory, type SecretBox, conflict, newId, notFound, parseInput } from '@berth/core';

interface Sealed {
  databasePassword: string;
  databaseRootPassword: string | null;
  env: string | null;
}
/** The registry's appName check (WorkloadRegistry.assertAppNameFree). */
type AssertAppNameFree = (appName: string, serverId: string | null, em: EntityManager, self?: string) => Promise<void>;

const iso = (d: Date | string) => (d instanceof Date ? d.toISOString() : new Date(d).toISOString());

export class DatabaseService {
  readonly driver: DatabaseDriver;
  readonly entity: ReturnType<typeof databaseEntity>;
  readonly idKey: string;
  readonly #secrets: () => SecretBox;
  readonly #environments: () => EnvironmentDirectory;

  readonly #hostPorts: () => HostPorts;

  constructor(driver: DatabaseDriver, secrets: () => SecretBox, environments: () => EnvironmentDirectory, hostPorts: () => HostPorts) {
    this.#hostPorts = hostPorts;
    this.driver = driver;
    this.entity = databaseEntity(driver.kind);
    this.idKey = `${driver.kind}Id`;
    this.#secrets = secrets;
    this.#environments = environments;
  }

  get label(): string {
    return this.driver.label;
  }

  async find(id: string, organizationId: string, em: EntityManager): Promise<DatabaseRow> {
    const row = (await em.findOne(this.entity, { id, organizationId })) as DatabaseRow | null;
    if (!row) throw notFound(this.driver.label);
    return row;
  }

  sealedOf(row: DatabaseRow): Sealed {
    return JSON.parse(this.#secrets().decrypt(row.sealed)) as Sealed;
  }

  #seal(values: Sealed): string {
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

  async #assertPortFree(port: number | null, serverId: string | null, em: EntityManager, self?: string): Promise<void> {
    if (port === null) return;
    // Every holder of host ports answers: other databases of any kind, applications' published ports.
    const holds = (await this.#hostPorts().holdsExcept('', port, 'tcp', serverId, em)).filter(h => !(h.kind === this.driver.kind && h.id === self));
    if (holds.length) throw conflict(`externalPort ${port} is already used on this host`);
  }

  /** The databases of this kind holding the port on the host (as a HostPorts holder). */
  async portHolds(port: number, serverId: string | null, em: EntityManager): Promise<{ kind: string; id: string }[]> {
    const rows = (await em.find(this.entity, { externalPort: port, serverId })) as DatabaseRow[];
    return rows.map(r => ({ kind: this.driver.kind, id: r.id }));
  }

  async create(input: Record<string, any>, organizationId: string, em: EntityManager, assertAppNameFree: AssertAppNameFree): Promise<Record<string, unknown>> {
    const environment = await placementFor(this.#environments(), input, organizationId, em);
    const older = !input.environmentId;
    // The current variant's password rules for a current-variant request, the older one's otherwise.
    const passwordSchema = older ? (this.driver.olderPasswordSchema ?? Type.String()) : this.driver.passwordSchema;
    // The root password follows the same rules as the user's (as changePassword type root does).
    const rootGiven = this.driver.fields.databaseRootPassword && typeof input.databaseRootPassword === 'string';
    parseInput(
      Type.Object({ databasePassword: passwordSchema, ...(rootGiven ? { databaseRootPassword: passwordSchema } : {}) }),
      { databasePassword: input.databasePassword, ...(rootGiven ? { databaseRootPassword: input.databaseRootPassword } : {}) },
      false,
    );
    const serverId = input.serverId ?? null;
    // A serverId is checked by the caller (WorkloadRegistry.assertServer): a server of the organization.
    const appName = input.appName ?? generateAppName(input.name, this.driver.kind);
    await assertAppNameFree(appName, serverId, em);
    const dockerImage = input.dockerImage ?? (older ? this.driver.defaultImage.older : this.driver.defaultImage.current);
    const id = newId();
    const row = em.create(this.entity, {
      id,
      name: input.name,
      appName,
      description: input.description ?? null,
      environmentId: environment.environmentId,
      organizationId,
      serverId,
      applicationStatus: 'idle',
      externalPort: null,
      databaseName: this.driver.fields.databaseName ? input.databaseName : null,
      databaseUser: this.driver.fields.databaseUser ? (input.databaseUser ?? this.driver.defaultUser ?? null) : null,
      settings: { dockerImage },
      dataVolume: dataVolumeOf(this.driver.kind, id),
      sealed: this.#seal({
        databasePassword: input.databasePassword,
        databaseRootPassword: this.driver.fields.databaseRootPassword ? input.databaseRootPassword || randomBytes(18).toString('base64url') : null,
        env: null,
      }),
      createdAt: new Date(),
    }) as DatabaseRow;
    await em.flush();
    return this.view(row);
  }

  /** Applies any subset of the API fields (update, saveEnvironment, saveExternalPort, changeStatus, move). */
  async change(id: string, organizationId: string, changes: Record<string, unknown>, em: EntityManager, assertAppNameFree: AssertAppNameFree): Promise<Record<string, unknown>> {
    const row = await this.find(id, organizationId, em);
    const sealed = this.sealedOf(row);
    const settings = { ...row.settings };
    let sealedChanged = false;
    for (const [key, value] of Object.entries(changes)) {
      if (value === undefined || key === this.idKey || key === 'createdAt') continue;
      switch (key) {
        case 'environmentId':
          row.environmentId = (await this.#environments().get(value as string, organizationId, em)).environmentId;
          break;
        case 'appName':
          if (value !== row.appName) await assertAppNameFree(value as string, row.serverId, em, row.id);
          row.appName = value as string;
          break;
        case 'externalPort':
          await this.#assertPortFree(value as number | null, row.serverId, em, row.id);
          row.externalPort = value as number | null;
          break;
        case 'name':
          row.name = value as string;
          break;
        case 'description':
          row.description = value as string | null;
          break;
        case 'applicationStatus':
          row.applicationStatus = value as string;
          break;
        case 'databaseName':
          if (this.driver.fields.databaseName) row.databaseName = value as string;
          break;
        case 'databaseUser':
          if (this.driver.fields.databaseUser) row.databaseUser = value as string;
          break;
        case 'databasePassword':
        case 'databaseRootPassword':
        case 'env':
          if (key !== 'databaseRootPassword' || this.driver.fields.databaseRootPassword) {
            (sealed as unknown as Record<string, unknown>)[key] = value; // cast: the key is one of the kind's own fields, checked above
            sealedChanged = true;
          }
          break;
        default:
          if (key in settingFieldsOf(this.driver)) settings[key] = value;
      }
    }
    if (sealedChanged) row.sealed = this.#seal(sealed);
    row.settings = settings;
    await em.flush();
    return this.view(row);
  }

  async setStatus(id: string, status: string, em: EntityManager): Promise<void> {
    await em.nativeUpdate(this.entity, { id }, { applicationStatus: status });
  }

  async search(input: Record<string, any>, organizationId: string, em: EntityManager): Promise<{ items: Record<string, unknown>[]; total: number }> {
    const and = await searchFilters(input, organizationId, em);
    const [rows, total] = await em.findAndCount(this.entity, { $and: and }, { orderBy: { createdAt: 'desc', id: 'asc' }, limit: input.limit ?? 20, offset: input.offset ?? 0 });
    return { items: (rows as DatabaseRow[]).map(r => this.view(r, false)), total };
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
