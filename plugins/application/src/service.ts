// Application records of one organization: create, read, change, move, search, list for
// environments, and the resolver other plugins use to find an application. Secrets are
// sealed on write and opened only for `one` and for deploys. Engine work is in pipeline.ts.
import { randomBytes } from 'node:crypto';
import { iso, newId, notFound, containing, type Cradle, type EntityManager, type EnvironmentDirectory, type Principal, type SecretBox } from '@berth/core';
import { Application, type ApplicationRow } from './entities.ts';
import { sealedKeys, settingDefaults, settingKeys, type SealedKey, type SettingKey } from './fields.ts';
import type { ApplicationFields, CreateInput, SearchInput, UpdateInput } from './schemas.ts';
import { answerSwarmSettings, generateAppName, placementFor, recordLookups, searchFilters, WorkloadChanges, type AssertAppNameFree, type GitSourceRules, type WorkloadRef } from '@berth/plugin-workloads';

/** The kind's name on the wire (deployment targetType, mounts' serviceType). */
export const KIND = 'application';

/** Settings naming another record of the organization, checked on write (the deploy reads them in the record's organization only). */
export const REFERENCES = new Set(['customGitSSHKeyId', 'registryId', 'rollbackRegistryId', 'buildRegistryId', 'buildServerId']);
export type AssertReference = (key: string, id: string, organizationId: string, em: EntityManager) => Promise<void>;


const columnKeys = ['name', 'appName', 'description', 'sourceType', 'buildType', 'applicationStatus', 'serverId', 'refreshToken'] as const;
const sealedSet = new Set<string>(sealedKeys);

export class ApplicationService {
  readonly #secrets: () => SecretBox;
  readonly #environments: () => EnvironmentDirectory;


  /** Refuses (NOT_FOUND) a setting naming another record (a key, a registry, a build server) that is not one of the organization's. */
  readonly #assertReference: AssertReference;

  /** How a change applies its keys (the workload kit's, with this kind's columns and settings; a connection field is checked with the git provider connections, whose plugin may be disabled). */
  readonly #changes: WorkloadChanges<ApplicationRow>;

  constructor(
    secrets: () => SecretBox,
    environments: () => EnvironmentDirectory,
    gitConnections: () => GitSourceRules | undefined = () => undefined,
    assertReference: AssertReference = async () => undefined,
  ) {
    this.#secrets = secrets;
    this.#environments = environments;
    this.#assertReference = assertReference;
    this.#changes = new WorkloadChanges<ApplicationRow>({ columns: columnKeys, settings: settingKeys, idField: 'applicationId' }, { secrets, environments, git: gitConnections });
  }

  // ------------------------------------------------------------ records
  async find(applicationId: string, organizationId: string, em: EntityManager): Promise<ApplicationRow> {
    const row = await em.findOne(Application, { applicationId, organizationId });
    if (!row) throw notFound('Application');
    return row;
  }

  secretsOf(row: ApplicationRow): Record<SealedKey, string | null> {
    const open = JSON.parse(this.#secrets().decrypt(row.sealed)) as Partial<Record<SealedKey, string | null>>;
    return Object.fromEntries(sealedKeys.map(k => [k, open[k] ?? null])) as Record<SealedKey, string | null>;
  }

  /** The secret its push deliveries must be signed with (null: none). */
  webhookSecretOf(row: ApplicationRow): string | null {
    return row.webhookSecret ? this.#secrets().decrypt(row.webhookSecret) : null;
  }

  settingsOf(row: ApplicationRow): Record<SettingKey, unknown> {
    return { ...settingDefaults(), ...row.settings } as Record<SettingKey, unknown>;
  }

  #seal(values: Record<SealedKey, string | null>): string {
    return this.#secrets().encrypt(JSON.stringify(values));
  }

  /** Every API field; the sealed ones only when asked for (`one`, not lists). */
  view(row: ApplicationRow, withSecrets = true): ApplicationFields {
    const secrets = withSecrets ? this.secretsOf(row) : Object.fromEntries(sealedKeys.map(k => [k, null]));
    return {
      applicationId: row.applicationId,
      name: row.name,
      appName: row.appName,
      description: row.description ?? null,
      environmentId: row.environmentId,
      serverId: row.serverId ?? null,
      sourceType: row.sourceType,
      buildType: row.buildType,
      applicationStatus: row.applicationStatus,
      refreshToken: row.refreshToken ?? null,
      ...secrets,
      ...answerSwarmSettings(this.settingsOf(row)),
      webhookSecret: null,
      hasWebhookSecret: Boolean(row.webhookSecret),
      organizationId: row.organizationId,
      createdAt: iso(row.createdAt)!,
    } as ApplicationFields;
  }

  async create(input: CreateInput, organizationId: string, em: EntityManager, assertAppNameFree: AssertAppNameFree): Promise<ApplicationFields> {
    const environment = await placementFor(this.#environments(), input, organizationId, em);
    const serverId = input.serverId ?? null;
    // A serverId is checked by the caller (WorkloadRegistry.assertServer): a server of the organization.
    const appName = input.appName ?? generateAppName(input.name);
    await assertAppNameFree(appName, serverId, em);
    const row = em.create(Application, {
      applicationId: newId(),
      name: input.name,
      appName,
      description: input.description ?? null,
      environmentId: environment.environmentId,
      organizationId,
      serverId,
      sourceType: 'github',
      buildType: 'nixpacks',
      applicationStatus: 'idle',
      refreshToken: randomBytes(24).toString('base64url'),
      webhookSecret: null,
      settings: {},
      sealed: this.#seal(Object.fromEntries(sealedKeys.map(k => [k, null])) as Record<SealedKey, string | null>),
      createdAt: new Date(),
    });
    await em.flush();
    return this.view(row);
  }

  /** Applies any subset of API fields (update and the save* operations). */
  async change(
    applicationId: string,
    organizationId: string,
    changes: Partial<UpdateInput> & Record<string, unknown>,
    em: EntityManager,
    assertAppNameFree: AssertAppNameFree,
    caller?: Pick<Principal, 'userId' | 'role'>,
  ): Promise<ApplicationFields> {
    const row = await this.find(applicationId, organizationId, em);
    const secrets = this.secretsOf(row);
    await this.#changes.apply(row, changes, { organizationId, em, assertAppNameFree, caller }, async (key, value, settings) => {
      if (sealedSet.has(key)) {
        secrets[key as SealedKey] = value as string | null;
        row.sealed = this.#seal(secrets);
        return true;
      }
      if (!REFERENCES.has(key) || typeof value !== 'string' || !value) return false;
      await this.#assertReference(key, value, organizationId, em);
      settings[key] = value;
      return true;
    });
    return this.view(row);
  }

  async setStatus(applicationId: string, status: string, em: EntityManager): Promise<void> {
    await em.nativeUpdate(Application, { applicationId }, { applicationStatus: status });
  }

  async search(input: SearchInput, organizationId: string, em: EntityManager): Promise<{ items: ApplicationFields[]; total: number }> {
    const and = await searchFilters(input, organizationId, em);
    for (const f of ['repository', 'owner', 'dockerImage'] as const) {
      const v = input[f]?.trim();
      if (v) and.push({ settings: { [f]: { $ilike: containing(v) } } });
    }
    const [rows, total] = await em.findAndCount(Application, { $and: and }, { orderBy: { createdAt: 'desc', applicationId: 'asc' }, limit: input.limit ?? 20, offset: input.offset ?? 0 });
    return { items: rows.map(r => this.view(r, false)), total };
  }

  // ------------------------------------------------------------ for other plugins
  ref(row: ApplicationRow): WorkloadRef {
    return { kind: KIND, id: row.applicationId, organizationId: row.organizationId, environmentId: row.environmentId, appName: row.appName, name: row.name, serverId: row.serverId ?? null };
  }

  readonly #lookups = recordLookups<ApplicationRow>(Application, 'applicationId', row => this.ref(row));
  findRef = this.#lookups.findRef;
  findByAppName = this.#lookups.findByAppName;
  inEnvironments = this.#lookups.inEnvironments;

  /** The applications of environments, for project and environment reads (no secrets in lists). */
  async list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>> {
    const rows = await em.find(Application, { environmentId: { $in: environmentIds } }, { orderBy: { createdAt: 'asc', applicationId: 'asc' } });
    const out = new Map<string, Record<string, unknown>[]>();
    for (const row of rows) {
      const { env: _e, buildArgs: _b, buildSecrets: _s, previewEnv: _pe, previewBuildArgs: _pb, previewBuildSecrets: _ps, password: _p, ...rest } = this.view(row, false);
      if (!out.has(row.environmentId)) out.set(row.environmentId, []);
      out.get(row.environmentId)!.push(rest);
    }
    return out;
  }
}
