// Compose records as the deployer, the workload kind and the push source use them: their views,
// env and settings, how a change applies its keys, the status, the list for environments and the
// lookups the workload registry asks for. The env is sealed on write and opened only for `one`
// and for deploys. compose.* is requests.ts; engine work is the deployer's.
import { iso, type EntityManager, type EnvironmentDirectory, type SecretBox } from '@berth/core';
import { SourceRecords, type GitSourceRules } from '@berth/plugin-workloads';
import { Compose, type ComposeRow } from './entities.ts';
import type { SettingKey, StackFields } from './fields.ts';
import type { ComposeFields } from './schemas.ts';

/** The kind's name on the wire (deployment targetType, mounts' serviceType, domainType). */
export const KIND = 'compose';

export type { AssertAppNameFree } from '@berth/plugin-workloads';

const columnKeys = ['name', 'appName', 'description', 'sourceType', 'composeType', 'composeStatus', 'serverId', 'refreshToken', 'composeFile'] as const;

/** Registered as the singleton `composeStacks`; compose.* for a request is ComposeRequests (requests.ts). */
export class ComposeService extends SourceRecords<ComposeRow, SettingKey> {
  /** `fields`: the stack's fields with the enabled forges' (stackFields). */
  constructor(fields: StackFields, secrets: () => SecretBox, environments: () => EnvironmentDirectory, gitConnections?: () => GitSourceRules | undefined) {
    const table = { kind: KIND, entity: Compose, idField: 'composeId', statusField: 'composeStatus', columns: columnKeys, settings: fields.settingKeys, defaults: fields.settingDefaults } as const;
    super(table, secrets, environments, gitConnections);
  }

  /** The env text (null when none). */
  envOf(row: ComposeRow): string | null {
    const open = this.secrets().decrypt(row.sealed);
    return open === '' ? null : open;
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

  /** The stacks of environments, for project and environment reads (no env in lists). */
  list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>> {
    return this.lookups.list(environmentIds, em, row => this.view(row, false));
  }
}
