// Compose stacks as a workload kind of the registry: records through the service, runs through
// the deployer, removal with everything the stack has on the host (containers or services,
// networks, and its volumes when asked) and in other plugins (mounts, domains, deployments).
import { Type, schema, type CheckoutSource, type Cradle, type EntityManager, type TSchema } from '@berth/core';
import { RecordKind, recordPushSource, workloadSummary, type CheckoutIo, type PushSource, type RemoveOptions, type WorkloadCapabilities, type WorkloadRef } from '@berth/plugin-workloads';
import { Compose, type ComposeRow } from './entities.ts';
import { KIND, type ComposeService } from './service.ts';
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
  /** The stack's record (ComposeFields, with the enabled forges' fields). */
  readonly recordSchema: TSchema;
  /** Pushes reach it at /api/deploy/compose/{refreshToken} (the peer's path). */
  readonly push: PushSource = recordPushSource({ kind: KIND, hookPath: 'compose', entity: Compose, idKey: 'composeId', records: this.records as ComposeService, cradle: this.cradle });

  constructor(stacks: ComposeService, deployer: ComposeDeployer, cradle: () => Cradle, recordSchema: TSchema) {
    super(stacks, deployer, cradle);
    this.recordSchema = recordSchema;
  }

  /** The stack's record as backup.one and volumeBackups.one join it (the peer's `compose` relation). */
  async record(id: string, em: EntityManager): Promise<Record<string, unknown> | null> {
    const row = await this.load(id, em);
    return row ? (this.records as ComposeService).view(row) : null;
  }

  /** Its repository as its deploys fetch it (none for a stored file): the checkout its file patches are made on (patch.*). */
  checkout(id: string, workDir: string, io: CheckoutIo): Promise<CheckoutSource | null> {
    return (this.deployer as ComposeDeployer).checkout(id, workDir, io);
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
