// Applications as a workload kind of the registry: records through the service, runs through
// the deployer, and removal with everything the application has on the host and in other
// plugins (service, work directory, mounts, ports, deployment records).
import { optionalService, Type, schema, type EntityManager } from '@berth/core';
import { RecordKind, workloadSummary, type PushSource, type WorkloadCapabilities } from '@berth/plugin-workloads';
import { Application, type ApplicationRow } from './entities.ts';
import { KIND, type ApplicationService } from './service.ts';
import { applicationDir } from './deployer.ts';

/** Applications keep no named volumes of their own: RemoveOptions.volumes concerns the kinds that do. */
export class ApplicationKind extends RecordKind<ApplicationRow> {
  readonly kind = KIND;
  readonly idField = 'applicationId';
  readonly listKey = 'applications';
  readonly label = 'Application';
  readonly capabilities: WorkloadCapabilities = { mounts: true, ports: true, domains: true, backups: false };
  /** The peer lists an application's icon too. */
  readonly listItem = workloadSummary('applicationId', { icon: schema.Nullable(Type.String()) });
  readonly listSource = { entity: Application, json: 'settings' };
  /** Pushes reach it at /api/deploy/{refreshToken} (the peer's path). */
  readonly push: PushSource = {
    hookPath: '',
    byRefreshToken: async (refreshToken, em) => {
      const row = await em.findOne(Application, { refreshToken });
      if (!row) return null;
      const apps = this.records as ApplicationService;
      const ref = await apps.findRef(row.applicationId, em);
      return ref && { workload: ref, fields: { sourceType: row.sourceType, ...apps.settingsOf(row) }, webhookSecret: apps.webhookSecretOf(row) };
    },
    deploy: async (workload, run, em) => {
      const request = { targetType: KIND, targetId: workload.id, organizationId: workload.organizationId, serverId: workload.serverId, action: 'deploy', ...run };
      return (await this.cradle().deployments.enqueue(request, em)).deploymentId;
    },
  };

  protected load(id: string, em: EntityManager): Promise<ApplicationRow | null> {
    return em.findOne(Application, { applicationId: id });
  }

  protected filesDir(row: ApplicationRow): string {
    return applicationDir(this.cradle().config.dataDir, row.appName);
  }

  protected override async removeAttachments(row: ApplicationRow, em: EntityManager): Promise<void> {
    await optionalService(this.cradle(), 'ports')?.removeForApplication(row.applicationId, em);
    await optionalService(this.cradle(), 'previews')?.removeForApplication(row.applicationId, em);
  }
}
