// Application records as the deployer, the workload kind and previews use them: their views,
// sealed secrets and settings, how a change applies its keys, the status, the list for
// environments and the resolver other plugins use to find an application. Secrets are sealed on
// write and opened only for `one` and for deploys. application.* is requests.ts; engine work is
// the deployer's.
import { randomBytes } from 'node:crypto';
import { iso, type EntityManager, type EnvironmentDirectory, type SecretBox } from '@berth/core';
import { Application, type ApplicationRow } from './entities.ts';
import { sealedKeys, settingDefaults, settingKeys, type SealedKey, type SettingKey } from './fields.ts';
import type { ApplicationFields } from './schemas.ts';
import { answerSwarmSettings, recordLookups, WorkloadChanges, type GitSourceRules, type WorkloadRef } from '@berth/plugin-workloads';

/** The kind's name on the wire (deployment targetType, mounts' serviceType). */
export const KIND = 'application';

/** A new webhook refresh token. */
export const newRefreshToken = (): string => randomBytes(24).toString('base64url');

const columnKeys = ['name', 'appName', 'description', 'sourceType', 'buildType', 'applicationStatus', 'serverId', 'refreshToken'] as const;

/** Registered as the singleton `applications`; application.* for a request is ApplicationRequests (requests.ts). */
export class ApplicationService {
  readonly #secrets: () => SecretBox;

  /** How a change applies its keys (the workload kit's, with this kind's columns and settings; a connection field is checked with the git provider connections, whose plugin may be disabled). */
  readonly changes: WorkloadChanges<ApplicationRow>;

  constructor(secrets: () => SecretBox, environments: () => EnvironmentDirectory, gitConnections: () => GitSourceRules | undefined = () => undefined) {
    this.#secrets = secrets;
    this.changes = new WorkloadChanges<ApplicationRow>({ columns: columnKeys, settings: settingKeys, idField: 'applicationId' }, { secrets, environments, git: gitConnections });
  }

  // ------------------------------------------------------------ records
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

  /** The sealed column holding these values. */
  seal(values: Record<SealedKey, string | null>): string {
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

  async setStatus(applicationId: string, status: string, em: EntityManager): Promise<void> {
    await em.nativeUpdate(Application, { applicationId }, { applicationStatus: status });
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
