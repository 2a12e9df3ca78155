// Compose stacks as a workload kind of the registry: records through the service, runs through
// the deployer, removal with everything the stack has on the host (containers or services,
// networks, and its volumes when asked) and in other plugins (mounts, domains, deployments).
import { Type, schema, type EntityManager } from '@berth/core';
import { RecordKind, workloadSummary, type PushSource, type RemoveOptions, type WorkloadCapabilities, type WorkloadRef } from '@berth/plugin-workloads';
import { Compose, type ComposeRow } from './entities.ts';
import { KIND, type ComposeService } from './service.ts';
import { ComposeFields } from './schemas.ts';
import { composeDir, type ComposeDeployer } from './deployer.ts';
import { ComposeBackups } from './backups.ts';

export class ComposeKind extends RecordKind<ComposeRow> {
  readonly kind = KIND;
  readonly idField = 'composeId';
  readonly listKey = 'compose';
  readonly label = 'Compose';
  // Compose mounts are files in the stack's directory (the file refers to them); ports are the file's own.
  readonly capabilities: WorkloadCapabilities = { mounts: true, ports: false, domains: true, backups: true };
  /** Database backups of its services (backupType "compose"). */
  readonly backups = new ComposeBackups(this.deployer as ComposeDeployer, () => this.cradle());
  readonly listItem = workloadSummary('composeId', { icon: schema.Nullable(Type.String()) }, 'composeStatus');
  readonly listSource = { entity: Compose, json: 'settings' };
  readonly recordSchema = ComposeFields;
  /** Pushes reach it at /api/deploy/compose/{refreshToken} (the peer's path). */
  readonly push: PushSource = {
    hookPath: 'compose',
    byRefreshToken: async (refreshToken, em) => {
      const row = await em.findOne(Compose, { refreshToken });
      if (!row) return null;
      const stacks = this.records as ComposeService;
      const ref = await stacks.findRef(row.composeId, em);
      return ref && { workload: ref, fields: { sourceType: row.sourceType, ...stacks.settingsOf(row) }, webhookSecret: stacks.webhookSecretOf(row) };
    },
    deploy: async (workload, run, em) => {
      const request = { targetType: KIND, targetId: workload.id, organizationId: workload.organizationId, serverId: workload.serverId, action: 'deploy', ...run };
      return (await this.cradle().deployments.enqueue(request, em)).deploymentId;
    },
  };

  /** The stack's record as backup.one and volumeBackups.one join it (the peer's `compose` relation). */
  async record(id: string, em: EntityManager): Promise<Record<string, unknown> | null> {
    const row = await this.load(id, em);
    return row ? (this.records as ComposeService).view(row) : null;
  }

  protected load(id: string, em: EntityManager): Promise<ComposeRow | null> {
    return em.findOne(Compose, { composeId: id });
  }

  protected filesDir(row: ComposeRow): string {
    return composeDir(this.cradle().config.dataDir, row.appName);
  }

  protected override removeFromHost(row: ComposeRow, options: RemoveOptions): Promise<void> {
    return (this.deployer as ComposeDeployer).removeStack(row, options.volumes);
  }

  async routeUpstream(workload: WorkloadRef, serviceName: string, port: number, em: EntityManager): Promise<string | null> {
    const row = await this.load(workload.id, em);
    return row ? (this.deployer as ComposeDeployer).upstreamOf(row, serviceName, port) : null;
  }
}
