// Compose records as the deployer, the workload kind and the push source use them: their views,
// env and settings, how a change applies its keys, the status, the list for environments and the
// lookups the workload registry asks for. The env is sealed on write and opened only for `one`
// and for deploys. compose.* is requests.ts; engine work is the deployer's.
import { randomBytes } from 'node:crypto';
import { iso, type EntityManager, type EnvironmentDirectory, type SecretBox } from '@berth/core';
import { recordLookups, WorkloadChanges, type GitSourceRules, type WorkloadRef } from '@berth/plugin-workloads';
import { Compose, type ComposeRow } from './entities.ts';
import { settingDefaults, settingKeys, type SettingKey } from './fields.ts';
import type { ComposeFields } from './schemas.ts';

/** The kind's name on the wire (deployment targetType, mounts' serviceType, domainType). */
export const KIND = 'compose';

export type { AssertAppNameFree } from '@berth/plugin-workloads';

const columnKeys = ['name', 'appName', 'description', 'sourceType', 'composeType', 'composeStatus', 'serverId', 'refreshToken', 'composeFile'] as const;

/** A new webhook refresh token. */
export const newRefreshToken = (): string => randomBytes(24).toString('base64url');

/** Registered as the singleton `composeStacks`; compose.* for a request is ComposeRequests (requests.ts). */
export class ComposeService {
  readonly #secrets: () => SecretBox;

  /** How a change applies its keys (the workload kit's, with this kind's columns and settings; a connection field is checked with the git provider connections, whose plugin may be disabled). */
  readonly changes: WorkloadChanges<ComposeRow>;

  constructor(secrets: () => SecretBox, environments: () => EnvironmentDirectory, gitConnections: () => GitSourceRules | undefined = () => undefined) {
    this.#secrets = secrets;
    this.changes = new WorkloadChanges<ComposeRow>({ columns: columnKeys, settings: settingKeys, idField: 'composeId' }, { secrets, environments, git: gitConnections });
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

  async setStatus(composeId: string, status: string, em: EntityManager): Promise<void> {
    await em.nativeUpdate(Compose, { composeId }, { composeStatus: status });
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
