// Applications as a workload kind of the registry: records through the service, runs through
// the deployer, and removal with everything the application has on the host and in other
// plugins (service, work directory, mounts, ports, deployment records).
import { optionalService, Type, schema, type CheckoutSource, type EntityManager } from '@berth/core';
import { RecordKind, recordPushSource, workloadSummary, type CheckoutIo, type PushSource, type WorkloadCapabilities } from '@berth/plugin-workloads';
import { Application, type ApplicationRow } from './entities.ts';
import { KIND, type ApplicationService } from './service.ts';
import { applicationDir, type ApplicationDeployer } from './deployer.ts';

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
  readonly push: PushSource = recordPushSource({ kind: KIND, hookPath: '', entity: Application, idKey: 'applicationId', records: this.records as ApplicationService, cradle: this.cradle });

  /** Its repository as its deploys fetch it: the checkout its file patches are made on (patch.*). */
  checkout(id: string, workDir: string, io: CheckoutIo): Promise<CheckoutSource | null> {
    return (this.deployer as ApplicationDeployer).checkout(id, workDir, io);
  }

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
