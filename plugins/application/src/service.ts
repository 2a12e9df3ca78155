// Application records as the deployer, the workload kind and previews use them: their views,
// sealed secrets and settings, how a change applies its keys, the status, the list for
// environments and the resolver other plugins use to find an application. Secrets are sealed on
// write and opened only for `one` and for deploys. application.* is requests.ts; engine work is
// the deployer's.
import { iso, type EntityManager, type EnvironmentDirectory, type SecretBox } from '@berth/core';
import { Application, type ApplicationRow } from './entities.ts';
import { sealedKeys, settingDefaults, settingKeys, type SealedKey, type SettingKey } from './fields.ts';
import type { ApplicationFields } from './schemas.ts';
import { answerSwarmSettings, SourceRecords, type GitSourceRules } from '@berth/plugin-workloads';

/** The kind's name on the wire (deployment targetType, mounts' serviceType). */
export const KIND = 'application';

const columnKeys = ['name', 'appName', 'description', 'sourceType', 'buildType', 'applicationStatus', 'serverId', 'refreshToken'] as const;

/** Registered as the singleton `applications`; application.* for a request is ApplicationRequests (requests.ts). */
export class ApplicationService extends SourceRecords<ApplicationRow, SettingKey> {
  constructor(secrets: () => SecretBox, environments: () => EnvironmentDirectory, gitConnections?: () => GitSourceRules | undefined) {
    const table = { kind: KIND, entity: Application, idField: 'applicationId', statusField: 'applicationStatus', columns: columnKeys, settings: settingKeys, defaults: settingDefaults } as const;
    super(table, secrets, environments, gitConnections);
  }

  // ------------------------------------------------------------ records
  secretsOf(row: ApplicationRow): Record<SealedKey, string | null> {
    const open = JSON.parse(this.secrets().decrypt(row.sealed)) as Partial<Record<SealedKey, string | null>>;
    return Object.fromEntries(sealedKeys.map(k => [k, open[k] ?? null])) as Record<SealedKey, string | null>;
  }

  /** The sealed column holding these values. */
  seal(values: Record<SealedKey, string | null>): string {
    return this.secrets().encrypt(JSON.stringify(values));
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

  /** The applications of environments, for project and environment reads (no secrets in lists). */
  list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>> {
    return this.lookups.list(environmentIds, em, row => {
      const { env: _e, buildArgs: _b, buildSecrets: _s, previewEnv: _pe, previewBuildArgs: _pb, previewBuildSecrets: _ps, password: _p, ...rest } = this.view(row, false);
      return rest;
    });
  }
}
