// Applications as a workload kind of the registry: records through the service, runs through
// the deployer, and removal with everything the application has on the host and in other
// plugins (service, work directory, mounts, ports, deployment records).
import { rm } from 'node:fs/promises';
import { optionalService, type Cradle, type EntityManager } from '@berth/core';
import { summaryOf, workloadSummary, type RemoveOptions, type WorkloadCapabilities, type WorkloadKind, type WorkloadRef } from '@berth/plugin-workloads';
import { Type, schema } from '@berth/core';
import { Application } from './entities.ts';
import { KIND, type ApplicationService } from './service.ts';
import { applicationDir, type ApplicationDeployer } from './deployer.ts';

export class ApplicationKind implements WorkloadKind {
  readonly kind = KIND;
  readonly idField = 'applicationId';
  readonly listKey = 'applications';
  readonly label = 'Application';
  readonly capabilities: WorkloadCapabilities = { mounts: true, ports: true, domains: true, backups: false };
  /** The peer lists an application's icon too. */
  readonly listItem = workloadSummary('applicationId', { icon: schema.Nullable(Type.String()) });
  readonly deployer: ApplicationDeployer;
  readonly #apps: ApplicationService;
  readonly #cradle: () => Cradle;

  constructor(apps: ApplicationService, deployer: ApplicationDeployer, cradle: () => Cradle) {
    this.#apps = apps;
    this.deployer = deployer;
    this.#cradle = cradle;
  }

  find(id: string, em: EntityManager): Promise<WorkloadRef | null> {
    return this.#apps.findRef(id, em);
  }

  findByAppName(appName: string, serverId: string | null, em: EntityManager): Promise<WorkloadRef | null> {
    return this.#apps.findByAppName(appName, serverId, em);
  }

  inEnvironments(environmentIds: string[], em: EntityManager): Promise<WorkloadRef[]> {
    return this.#apps.inEnvironments(environmentIds, em);
  }

  async list(environmentIds: string[], em: EntityManager): Promise<Map<string, Record<string, unknown>[]>> {
    const lists = await this.#apps.list(environmentIds, em);
    return new Map([...lists].map(([environmentId, views]) => [environmentId, views.map(v => summaryOf(v, this.listItem))]));
  }

  /** Applications keep no named volumes of their own: `volumes` concerns the kinds that do. */
  async remove(workload: WorkloadRef, em: EntityManager, _options: RemoveOptions): Promise<void> {
    const row = await em.findOne(Application, { applicationId: workload.id });
    if (!row) return;
    const cradle = this.#cradle();
    const deployments = optionalService(cradle, 'deployments');
    await deployments?.cancelFor(KIND, row.applicationId, em);
    await this.deployer.removeService(row);
    await rm(applicationDir(cradle.config.dataDir, row.appName), { recursive: true, force: true });
    await optionalService(cradle, 'mounts')?.removeForService(KIND, row.applicationId, em);
    await optionalService(cradle, 'ports')?.removeForApplication(row.applicationId, em);
    await deployments?.removeFor(KIND, row.applicationId, em, { includeActive: true });
    await em.remove(row).flush();
  }
}
