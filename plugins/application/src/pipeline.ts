// The application's runs and what hangs off it, as the API sees them: queue a run, read
// the record with its deployments, mounts and ports, cancel, clear, delete. The engine work
// of a run is the deployer's (deployer.ts); this file never talks to Docker itself.
import { randomBytes } from 'node:crypto';
import { invalidField, optionalService, type Cradle, type DeploymentRecord, type DeploymentService, type EntityManager } from '@berth/core';
import type { ApplicationRow } from './entities.ts';
import { KIND, type ApplicationService } from './service.ts';
import type { ApplicationFields, ApplicationView, CreateInput, ReadLogsInput, SearchInput, UpdateInput } from './schemas.ts';
import type { ApplicationDeployer } from './deployer.ts';
import { placementOf } from '@berth/plugin-workloads';

export interface Queued {
  deploymentId: string;
  status: string;
  applicationId: string;
  title: string;
  action: string;
  createdAt: string;
}

const titles: Record<string, string> = {
  deploy: 'Manual deployment',
  redeploy: 'Rebuild deployment',
  reload: 'Reload (restart the service)',
  start: 'Start the service',
  stop: 'Stop the service',
};

export class ApplicationPipeline {
  readonly #apps: ApplicationService;
  readonly #cradle: () => Cradle;
  readonly #deployer: ApplicationDeployer;

  constructor(apps: ApplicationService, deployer: ApplicationDeployer, cradle: () => Cradle) {
    this.#apps = apps;
    this.#deployer = deployer;
    this.#cradle = cradle;
  }

  get #deployments(): DeploymentService {
    return this.#cradle().deployments;
  }


  async enqueue(row: ApplicationRow, action: string, em: EntityManager, input: { title?: string; description?: string | null }): Promise<Queued> {
    const record = await this.#deployments.enqueue({
      targetType: KIND, targetId: row.applicationId, organizationId: row.organizationId, serverId: row.serverId ?? null,
      action, title: input.title || titles[action] || action, description: input.description ?? null,
    }, em);
    return { deploymentId: record.deploymentId, status: record.status, applicationId: row.applicationId, title: record.title, action: record.action, createdAt: record.createdAt };
  }

  async one(applicationId: string, organizationId: string, em: EntityManager): Promise<ApplicationView> {
    const row = await this.#apps.find(applicationId, organizationId, em);
    const deployments = (await optionalService(this.#cradle(), 'deployments')?.listFor(KIND, [applicationId], em))?.get(applicationId) ?? [];
    const directory = optionalService(this.#cradle(), 'mounts');
    const mounts = directory?.views((await directory.forServices(KIND, [applicationId], em)).get(applicationId) ?? []) ?? [];
    const ports = (await optionalService(this.#cradle(), 'ports')?.forApplications([applicationId], em))?.get(applicationId) ?? [];
    return {
      ...this.#apps.view(row),
      environment: await placementOf(this.#cradle(), row.environmentId, organizationId, em),
      deployments: deployments.map(d => deploymentView(d)),
      mounts,
      ports: ports as unknown as Record<string, unknown>[],
      // Domains, redirects, security entries, registries and servers come with their plugins.
      domains: [], redirects: [], security: [], registry: null, server: null,
    };
  }

  /** Deletes the application and everything it left on the host; answers the record as it was. */
  async remove(applicationId: string, organizationId: string, em: EntityManager): Promise<ApplicationFields> {
    const row = await this.#apps.find(applicationId, organizationId, em);
    const view = this.#apps.view(row);
    await this.#cradle().workloads.kind(KIND)!.remove(this.#apps.ref(row), em, { volumes: true });
    return view;
  }

  async clearQueue(row: ApplicationRow, em: EntityManager): Promise<number> {
    return this.#deployments.clearQueueFor(KIND, row.applicationId, em);
  }

  async clearDeployments(row: ApplicationRow, em: EntityManager): Promise<void> {
    await this.#deployments.removeFor(KIND, row.applicationId, em);
  }

  async cancel(row: ApplicationRow, em: EntityManager): Promise<number> {
    return this.#deployments.cancelFor(KIND, row.applicationId, em);
  }

  readLogs(row: ApplicationRow, input: ReadLogsInput): Promise<string> {
    return this.#deployer.readLogs(row, input);
  }
}

/** A new webhook refresh token. */
export const newRefreshToken = (): string => randomBytes(24).toString('base64url');

/**
 * application.* for one request: records and runs confined to the caller's organization, in
 * the request's unit of work, so handlers pass only their input. Registered request-scoped as
 * `callerApplications`; the deployer and the workload kind keep using the singletons.
 */
export const callerApplications = (apps: ApplicationService, pipeline: ApplicationPipeline) => ({ principal, em, workloads }: Cradle) => {
  const organizationId = principal!.organizationId;
  const assertAppNameFree = workloads.assertAppNameFree.bind(workloads);
  const find = (applicationId: string) => apps.find(applicationId, organizationId, em);
  return {
    /** Creates an application in one of the organization's environments. */
    create: (input: CreateInput) => apps.create(input, organizationId, em, assertAppNameFree),
    /** The application with its placement, deployments, mounts and ports. */
    one: (applicationId: string) => pipeline.one(applicationId, organizationId, em),
    /** Applies any subset of the API's fields. */
    change: (applicationId: string, changes: Partial<UpdateInput> & Record<string, unknown>) => apps.change(applicationId, organizationId, changes, em, assertAppNameFree),
    /** Queues a run of the application; answers the queued deployment. */
    run: async (applicationId: string, action: string, input: { title?: string; description?: string | null }) => pipeline.enqueue(await find(applicationId), action, em, input),
    /** Queues a restart, once the caller names the application's appName right. */
    reload: async (applicationId: string, appName: string) => {
      const row = await find(applicationId);
      if (row.appName !== appName) throw invalidField('appName', 'does not match the application');
      return pipeline.enqueue(row, 'reload', em, {});
    },
    /** Deletes the application and what it left on the host. */
    remove: (applicationId: string) => pipeline.remove(applicationId, organizationId, em),
    /** Drops the queued deployments. */
    clearQueue: async (applicationId: string) => pipeline.clearQueue(await find(applicationId), em),
    /** Removes the finished deployments and their logs. */
    clearDeployments: async (applicationId: string) => pipeline.clearDeployments(await find(applicationId), em),
    /** Stops the running deployment and drops the queued ones. */
    cancel: async (applicationId: string) => pipeline.cancel(await find(applicationId), em),
    /** Applications matching the given texts, paged. */
    search: (input: SearchInput) => apps.search(input, organizationId, em),
    /** The running service's container output. */
    readLogs: async (input: ReadLogsInput) => pipeline.readLogs(await find(input.applicationId), input),
  };
};

declare module '@berth/core' {
  interface Cradle {
    /** application.* for the current request's caller (request scope only). */
    callerApplications: ReturnType<ReturnType<typeof callerApplications>>;
  }
}

/** A deployment as `application.one` lists it: the record plus the peer's id fields. */
function deploymentView(d: DeploymentRecord): Record<string, unknown> {
  return { ...d, applicationId: d.targetId, composeId: null, isPreviewDeployment: false };
}
