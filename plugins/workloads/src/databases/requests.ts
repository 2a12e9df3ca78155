// <kind>.* for one request: a database kind's records and runs confined to the caller's
// organization, in the request's unit of work, so handlers pass only their input. Request-scoped:
// the caller's organization and the request's transaction come from the container; registered per
// kind (see databasesOf). The deployer, the deploy queue and the workload registry keep using the
// kind's singleton service.
import { conflict, invalidField, newId, notFound, optionalService, parseInput, RequestScope, type Cradle } from '@berth/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import Type from 'typebox';
import { placementOf } from '../views.ts';
import { serverRelation } from '../relations.ts';
import { placementFor, searchFilters } from '../records.ts';
import { enqueueRun } from '../runs.ts';
import { generateAppName } from '../naming.ts';
import type { AssertAppNameFree } from '../changes.ts';
import type { DatabaseRow } from './entity.ts';
import type { DatabaseKind } from './kind.ts';
import { externalPortFields, settingFieldsOf } from './schemas.ts';
import type { DatabaseService } from './service.ts';
import { dataVolumeOf } from './volumes.ts';
import { joinableNetworks } from '../user-networks.ts';

const titles: Record<string, string> = {
  deploy: 'Deploy the database',
  start: 'Start the database',
  stop: 'Stop the database',
  reload: 'Reload (restart the database)',
  rebuild: 'Rebuild: a new service and an empty data volume',
};

/** The container name of a kind's request-scoped service: postgresDatabases, redisDatabases… */
export const databasesOf = (kind: string) => `${kind}Databases`;

/** One database kind's <kind>.* for the current request; one class serves every kind, made per kind with its service and workload kind (registered under databasesOf(kind)). */
export class DatabaseRequests extends RequestScope {
  readonly #db: DatabaseService;
  readonly #workload: DatabaseKind;

  constructor(cradle: Cradle, db: DatabaseService, workload: DatabaseKind) {
    super(cradle);
    this.#db = db;
    this.#workload = workload;
  }

  /** The registry's appName check for the caller's organization: a new record's serverId must be one of the organization's servers. */
  get #assertAppNameFree(): AssertAppNameFree {
    return this.cradle.workloads.placement(this.organizationId);
  }

  /** Creates a database in one of the organization's environments (both variants). */
  async create(input: Record<string, any>): Promise<Record<string, unknown>> {
    const { driver } = this.#db;
    const { organizationId, em } = this;
    const environment = await placementFor(this.cradle.environments, input, organizationId, em);
    const older = !input.environmentId;
    // The current variant's password rules for a current-variant request, the older one's otherwise.
    const passwordSchema = older ? (driver.olderPasswordSchema ?? Type.String()) : driver.passwordSchema;
    // The root password follows the same rules as the user's (as changePassword type root does).
    const rootGiven = driver.fields.databaseRootPassword && typeof input.databaseRootPassword === 'string';
    parseInput(
      Type.Object({ databasePassword: passwordSchema, ...(rootGiven ? { databaseRootPassword: passwordSchema } : {}) }),
      { databasePassword: input.databasePassword, ...(rootGiven ? { databaseRootPassword: input.databaseRootPassword } : {}) },
      false,
    );
    const serverId = input.serverId ?? null;
    // A serverId is checked by the caller (WorkloadRegistry.assertServer): a server of the organization.
    const appName = input.appName ?? generateAppName(input.name, driver.kind);
    await this.#assertAppNameFree(appName, serverId, em);
    const dockerImage = input.dockerImage ?? (older ? driver.defaultImage.older : driver.defaultImage.current);
    // The driver's own fields that create takes (libsql's sqldNode...), checked together as the driver asks.
    const own = Object.fromEntries(Object.entries(driver.recordFields ?? {}).flatMap(([k, f]) => (f.create && input[k] !== undefined ? [[k, input[k]]] : [])));
    this.#assertRecord({ ...this.#db.settingsOf({ settings: own } as DatabaseRow), externalPort: null });
    const id = newId();
    const row = em.create(this.#db.entity, {
      id,
      name: input.name,
      appName,
      description: input.description ?? null,
      environmentId: environment.environmentId,
      organizationId,
      serverId,
      applicationStatus: 'idle',
      externalPort: null,
      databaseName: driver.fields.databaseName ? input.databaseName : null,
      databaseUser: driver.fields.databaseUser ? (input.databaseUser ?? driver.defaultUser ?? null) : null,
      settings: { ...own, dockerImage },
      dataVolume: dataVolumeOf(driver.kind, id),
      sealed: this.#db.seal({
        databasePassword: input.databasePassword,
        databaseRootPassword: driver.fields.databaseRootPassword ? input.databaseRootPassword || randomBytes(18).toString('base64url') : null,
        env: null,
      }),
      createdAt: new Date(),
    }) as DatabaseRow;
    await this.grantCreated('services', id);
    await em.flush();
    return this.#db.view(row);
  }

  /** The database with its environment and project, mounts, backups and connection URLs. */
  async one(id: string) {
    return this.#view(await this.#find(id));
  }

  /** Queues a run (deploy, start, stop, reload, rebuild); a given appName must be the database's. Answers the queued deployment's id. */
  async run(id: string, action: string, appName?: string): Promise<string> {
    const row = await this.#find(id);
    if (appName !== undefined && row.appName !== appName) throw invalidField('appName', 'does not match the database');
    return this.#enqueue(row, action);
  }

  /** Applies any subset of the API fields (update, saveEnvironment, saveExternalPort, changeStatus, move). */
  async change(id: string, changes: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { driver } = this.#db;
    const { organizationId, em } = this;
    const row = await this.#find(id);
    const sealed = this.#db.sealedOf(row);
    const settings = { ...row.settings };
    let sealedChanged = false;
    for (const [key, value] of Object.entries(changes)) {
      if (value === undefined || key === this.#db.idKey || key === 'createdAt') continue;
      switch (key) {
        case 'environmentId':
          row.environmentId = (await this.cradle.environments.get(value as string, organizationId, em)).environmentId;
          break;
        case 'appName':
          if (value !== row.appName) await this.#assertAppNameFree(value as string, row.serverId, em, row.id);
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
          if (driver.fields.databaseName) row.databaseName = value as string;
          break;
        case 'databaseUser':
          if (driver.fields.databaseUser) row.databaseUser = value as string;
          break;
        case 'databasePassword':
        case 'databaseRootPassword':
        case 'env':
          if (key !== 'databaseRootPassword' || driver.fields.databaseRootPassword) {
            (sealed as unknown as Record<string, unknown>)[key] = value; // cast: the key is one of the kind's own fields, checked above
            sealedChanged = true;
          }
          break;
        default:
          if (key in (driver.extraPorts ?? {})) await this.#assertPortFree(value as number | null, row.serverId, em, row.id);
          // Refused now rather than at the next deploy: another organization's network, one on another host, a bridge.
          if (key === 'networkIds') await joinableNetworks(this.cradle, value, { organizationId, serverId: row.serverId ?? null }, { field: key, swarm: true }, em);
          if (key in settingFieldsOf(driver)) settings[key] = value;
      }
    }
    this.#assertRecord({ ...this.#db.settingsOf({ ...row, settings } as DatabaseRow), externalPort: row.externalPort });
    if (sealedChanged) row.sealed = this.#db.seal(sealed);
    row.settings = settings;
    await em.flush();
    return this.#db.view(row);
  }

  /**
   * Sets the external ports given (saveExternalPorts of kinds with extra ports), by the peer's rule:
   * refused only when every port field is null (one null among ports stops publishing that one), and
   * when none is given at all (the peer's update then has nothing to set and fails before its deploy).
   */
  async savePorts(id: string, ports: Record<string, number | null | undefined>): Promise<void> {
    const fields = externalPortFields(this.#db.driver);
    const given = Object.entries(ports).filter(([, v]) => v !== undefined);
    if (given.length === 0 || fields.every(f => ports[f] === null)) throw invalidField(fields[0]!, `Either ${fields.join(', ')} must be provided`);
    await this.change(id, Object.fromEntries(given));
  }

  /** Deletes the database with its service, data volume, mounts and deployments; answers the record as it was, with its relations. */
  async remove(id: string) {
    const row = await this.#find(id);
    const answer = await this.#view(row);
    await this.#workload.remove(this.#db.ref(row), this.em, { volumes: true });
    return answer;
  }

  /** Changes a password in the running database, then in the record. */
  async changePassword(id: string, password: string, type: 'user' | 'root'): Promise<void> {
    const row = await this.#find(id);
    await this.#workload.deployer.changePassword(row, password, type);
    await this.change(row.id, type === 'root' ? { databaseRootPassword: password } : { databasePassword: password });
  }

  /** Databases of the kind matching the given texts, paged (no credentials in lists). */
  async search(input: Record<string, any>): Promise<{ items: Record<string, unknown>[]; total: number }> {
    const and = await searchFilters(input, this.organizationId, this.em, { field: 'id', grants: this.principal.grants });
    const [rows, total] = await this.em.findAndCount(this.#db.entity, { $and: and }, { orderBy: { createdAt: 'desc', id: 'asc' }, limit: input.limit ?? 20, offset: input.offset ?? 0 });
    return { items: (rows as DatabaseRow[]).map(r => this.#db.view(r, false)), total };
  }

  /** The database service's output. */
  async readLogs(id: string, options: { tail: number; since: string; search?: string }): Promise<string> {
    return this.#workload.deployer.logs(await this.#find(id), options);
  }

  /** One of the organization's databases of the kind (NOT_FOUND otherwise: another organization's is never FORBIDDEN). */
  async #find(id: string): Promise<DatabaseRow> {
    const row = (await this.em.findOne(this.#db.entity, { id, organizationId: this.organizationId })) as DatabaseRow | null;
    if (!row) throw notFound(this.#db.driver.label);
    return row;
  }

  /** The record with its relations and connection URLs, as `one` answers it. */
  async #view(row: DatabaseRow) {
    const { cradle, organizationId, em } = this;
    const db = this.#db;
    const environment = await placementOf(cradle, row.environmentId, organizationId, em);
    const directory = optionalService(cradle, 'mounts');
    const mounts = directory?.views((await directory.forServices(db.driver.kind, [row.id], em)).get(row.id) ?? []) ?? [];
    const backups = (await optionalService(cradle, 'backupDirectory')?.viewsFor(db.driver.kind, row.id, em)) ?? [];
    const creds = db.credentialsOf(row);
    const publicHost = cradle.config.publicUrl ? new URL(cradle.config.publicUrl).hostname : 'localhost';
    return {
      ...db.view(row),
      environment,
      mounts,
      server: await serverRelation(cradle, row.serverId, organizationId, em),
      backups,
      internalConnectionUrl: db.driver.connectionUrl(creds, row.appName, db.driver.internalPort),
      externalConnectionUrl: row.externalPort ? db.driver.connectionUrl(creds, publicHost, row.externalPort) : null,
    };
  }

  #enqueue(row: DatabaseRow, action: string): Promise<string> {
    return enqueueRun(this.cradle.deployments, this.#db.ref(row), action, titles, {}, this.em);
  }

  /** The driver's refusal of the record's own fields, and one host port given twice, as a 400 naming the field. */
  #assertRecord(record: Record<string, unknown>): void {
    const issue = this.#db.driver.recordIssue?.(record);
    if (issue) throw invalidField(issue.field, issue.message);
    const seen = new Map<unknown, string>();
    for (const field of externalPortFields(this.#db.driver)) {
      const port = record[field];
      if (port === null || port === undefined) continue;
      if (seen.has(port)) throw invalidField(field, `port ${String(port)} is already ${seen.get(port)}`);
      seen.set(port, field);
    }
  }

  async #assertPortFree(port: number | null, serverId: string | null, em: EntityManager, self?: string): Promise<void> {
    if (port === null) return;
    // Every holder of host ports answers: other databases of any kind, applications' published ports.
    const holds = (await this.cradle.hostPorts.holdsExcept('', port, 'tcp', serverId, em)).filter(h => !(h.kind === this.#db.driver.kind && h.id === self));
    if (holds.length) throw conflict(`externalPort ${port} is already used on this host`);
  }
}
