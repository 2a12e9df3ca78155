// Compose records of one organization: create, read, change, move, search, list for
// environments, and the lookups the workload registry asks for. The env is sealed on write and
// opened only for `one` and for deploys. Engine work is the deployer's.
import { randomBytes } from 'node:crypto';
import { iso, newId, notFound, type Cradle, type EntityManager, type EnvironmentDirectory, type Principal, type SecretBox } from '@berth/core';
import { generateAppName, placementFor, recordLookups, searchFilters, WorkloadChanges, type AssertAppNameFree, type GitSourceRules, type WorkloadRef } from '@berth/plugin-workloads';
import { Compose, type ComposeRow } from './entities.ts';
import { settingDefaults, settingKeys, type SettingKey } from './fields.ts';
import type { ComposeFields, CreateInput, SearchInput, SearchResult, UpdateInput } from './schemas.ts';
import type { Static } from '@berth/core';

/** The kind's name on the wire (deployment targetType, mounts' serviceType, domainType). */
export const KIND = 'compose';

export type { AssertAppNameFree } from '@berth/plugin-workloads';

const columnKeys = ['name', 'appName', 'description', 'sourceType', 'composeType', 'composeStatus', 'serverId', 'refreshToken', 'composeFile'] as const;

/** A new webhook refresh token. */
export const newRefreshToken = (): string => randomBytes(24).toString('base64url');

export class ComposeService {
  readonly #secrets: () => SecretBox;
  readonly #environments: () => EnvironmentDirectory;

  /** How a change applies its keys (the workload kit's, with this kind's columns and settings; a connection field is checked with the git provider connections, whose plugin may be disabled). */
  readonly #changes: WorkloadChanges<ComposeRow>;

  /** The stored key pairs (their plugin may be disabled): a customGitSSHKeyId must name one of the organization's. */
  readonly #sshKeys: () => Pick<Cradle['sshKeys'], 'one'> | undefined;

  constructor(
    secrets: () => SecretBox,
    environments: () => EnvironmentDirectory,
    gitConnections: () => GitSourceRules | undefined = () => undefined,
    sshKeys: () => Pick<Cradle['sshKeys'], 'one'> | undefined = () => undefined,
  ) {
    this.#secrets = secrets;
    this.#environments = environments;
    this.#sshKeys = sshKeys;
    this.#changes = new WorkloadChanges<ComposeRow>({ columns: columnKeys, settings: settingKeys, idField: 'composeId' }, { secrets, environments, git: gitConnections });
  }

  async find(composeId: string, organizationId: string, em: EntityManager): Promise<ComposeRow> {
    const row = await em.findOne(Compose, { composeId, organizationId });
    if (!row) throw notFound('Compose');
    return row;
  }

  /** The env text (null when none). */
  envOf(row: ComposeRow): string | null {
    const open = this.#secrets().decrypt(row.sealed);
    return open === '' ? null : open;
  }

  /** The secret its push deliveries must be signed with (null: none). */
  webhookSecretOf(row: ComposeRow): string | null {
    return row.webhookSecret ? this.#secrets().decrypt(row.webhookSecret) : null;
  }

  settingsOf(row: ComposeRow): Record<SettingKey, unknown> {
    return { ...settingDefaults(), ...row.settings } as Record<SettingKey, unknown>;
  }

  /** Every API field; the env only when asked for (`one`, not lists). */
  view(row: ComposeRow, withSecrets = true): ComposeFields {
    return {
      composeId: row.composeId,
      name: row.name,
      appName: row.appName,
      description: row.description ?? null,
      env: withSecrets ? this.envOf(row) : null,
      composeFile: row.composeFile,
      refreshToken: row.refreshToken ?? null,
      sourceType: row.sourceType,
      composeType: row.composeType,
      composeStatus: row.composeStatus,
      environmentId: row.environmentId,
      serverId: row.serverId ?? null,
      ...this.settingsOf(row),
      webhookSecret: null,
      hasWebhookSecret: Boolean(row.webhookSecret),
      organizationId: row.organizationId,
      createdAt: iso(row.createdAt)!,
    } as ComposeFields;
  }

  async create(
    input: CreateInput & { env?: string | null; sourceType?: string; icon?: string | null },
    organizationId: string,
    em: EntityManager,
    assertAppNameFree: AssertAppNameFree,
  ): Promise<ComposeRow> {
    const environment = await placementFor(this.#environments(), input, organizationId, em);
    // A serverId is checked by the caller (WorkloadRegistry.assertServer): a server of the organization.
    const serverId = input.serverId ?? null;
    const appName = input.appName ?? generateAppName(input.name);
    await assertAppNameFree(appName, serverId, em);
    const row = em.create(Compose, {
      composeId: newId(),
      name: input.name,
      appName,
      description: input.description ?? null,
      environmentId: environment.environmentId,
      organizationId,
      serverId,
      // The peer's default source is github; a file given at creation is a raw source.
      sourceType: input.sourceType ?? (input.composeFile ? 'raw' : 'github'),
      composeType: input.composeType ?? 'docker-compose',
      composeStatus: 'idle',
      refreshToken: newRefreshToken(),
      webhookSecret: null,
      composeFile: input.composeFile ?? '',
      settings: input.icon ? { icon: input.icon } : {},
      sealed: this.#secrets().encrypt(input.env ?? ''),
      createdAt: new Date(),
    });
    await em.flush();
    return row;
  }

  /** Applies any subset of API fields (update, saveEnvironment, randomize...). */
  async change(
    composeId: string,
    organizationId: string,
    changes: Partial<UpdateInput> & Record<string, unknown>,
    em: EntityManager,
    assertAppNameFree: AssertAppNameFree,
    caller?: Pick<Principal, 'userId' | 'role'>,
  ): Promise<ComposeRow> {
    const row = await this.find(composeId, organizationId, em);
    await this.#changes.apply(row, changes, { organizationId, em, assertAppNameFree, caller }, async (key, value, settings) => {
      if (key === 'env') {
        row.sealed = this.#secrets().encrypt((value as string | null) ?? '');
        return true;
      }
      if (key !== 'customGitSSHKeyId' || typeof value !== 'string' || !value) return false;
      await this.#sshKeys()?.one(value, organizationId, em);
      settings[key] = value;
      return true;
    });
    return row;
  }

  async setStatus(composeId: string, status: string, em: EntityManager): Promise<void> {
    await em.nativeUpdate(Compose, { composeId }, { composeStatus: status });
  }

  async search(input: SearchInput, organizationId: string, em: EntityManager): Promise<Static<typeof SearchResult>> {
    const and = await searchFilters(input, organizationId, em);
    const [rows, total] = await em.findAndCount(Compose, { $and: and }, { orderBy: { createdAt: 'desc', composeId: 'asc' }, limit: input.limit ?? 20, offset: input.offset ?? 0 });
    // The peer's search answers these columns only.
    const items = rows.map(r => ({
      composeId: r.composeId,
      name: r.name,
      appName: r.appName,
      description: r.description ?? null,
      environmentId: r.environmentId,
      composeStatus: r.composeStatus,
      sourceType: r.sourceType,
      createdAt: iso(r.createdAt)!,
    }));
    return { items, total };
  }

  // ------------------------------------------------------------ for the registry
  ref(row: ComposeRow): WorkloadRef {
    return { kind: KIND, id: row.composeId, organizationId: row.organizationId, environmentId: row.environmentId, appName: row.appName, name: row.name, serverId: row.serverId ?? null };
  }

  readonly #lookups = recordLookups<ComposeRow>(Compose, 'composeId', row => this.ref(row));
  findRef = this.#lookups.findRef;
  findByAppName = this.#lookups.findByAppName;
  inEnvironments = this.#lookups.inEnvironments;

  /** The stacks of environments, for project and environment reads (no env in lists). */
  async list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>> {
    const rows = await em.find(Compose, { environmentId: { $in: environmentIds } }, { orderBy: { createdAt: 'asc', composeId: 'asc' } });
    const out = new Map<string, Record<string, unknown>[]>();
    for (const row of rows) {
      if (!out.has(row.environmentId)) out.set(row.environmentId, []);
      out.get(row.environmentId)!.push(this.view(row, false));
    }
    return out;
  }
}
