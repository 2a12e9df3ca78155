// The application's runs and what hangs off it, as the API sees them: queue a run, read
// the record with its deployments, mounts and ports, cancel, clear, delete. The engine work
// of a run is the deployer's (deployer.ts); this file never talks to Docker itself.
import { randomBytes } from 'node:crypto';
import { invalidField, optionalService, type Cradle, type DeploymentService, type EntityManager } from '@berth/core';
import type { ApplicationRow } from './entities.ts';
import { KIND, type ApplicationService } from './service.ts';
import type { ApplicationFound, ApplicationView, CreateInput, ReadLogsInput, SearchInput, UpdateInput } from './schemas.ts';
import type { ApplicationDeployer } from './deployer.ts';
import { placementOf, registryRelation, serverRelation } from '@berth/plugin-workloads';

const titles: Record<string, string> = { deploy: 'Manual deployment', redeploy: 'Rebuild deployment', reload: 'Reload (restart the service)', start: 'Start the service', stop: 'Stop the service' };

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

  /** Queues a run of the application; answers the queued deployment's id. */
  async enqueue(row: ApplicationRow, action: string, em: EntityManager, input: { title?: string; description?: string | null }): Promise<string> {
    const record = await this.#deployments.enqueue(
      {
        targetType: KIND,
        targetId: row.applicationId,
        organizationId: row.organizationId,
        serverId: row.serverId ?? null,
        action,
        title: input.title || titles[action] || action,
        description: input.description ?? null,
      },
      em,
    );
    return record.deploymentId;
  }

  /** The record with its relations, as the peer's findApplicationById answers it (one, delete). */
  async found(row: ApplicationRow, organizationId: string, em: EntityManager): Promise<ApplicationFound> {
    const cradle = this.#cradle();
    const { applicationId } = row;
    const settings = this.#apps.settingsOf(row);
    // The deployment plugin is a declared dependency: its service is there.
    const records = (await this.#deployments.listFor(KIND, [applicationId], em)).get(applicationId) ?? [];
    const directory = optionalService(cradle, 'mounts');
    const mounts = directory?.views((await directory.forServices(KIND, [applicationId], em)).get(applicationId) ?? []) ?? [];
    const ports = (await optionalService(cradle, 'ports')?.forApplications([applicationId], em))?.get(applicationId) ?? [];
    const proxied = (await optionalService(cradle, 'domains')?.forService(KIND, applicationId, em)) ?? { domains: [], redirects: [], security: [] };
    return {
      ...this.#apps.view(row),
      environment: await placementOf(cradle, row.environmentId, organizationId, em),
      deployments: this.#deployments.views(records),
      mounts,
      ports,
      ...proxied,
      previewDeployments: (await optionalService(cradle, 'previews')?.forApplication(applicationId, em)) ?? [],
      github: (await optionalService(cradle, 'gitProviders')?.githubRelation(settings.githubId, organizationId, em)) ?? null,
      gitlab: (await optionalService(cradle, 'gitProviders')?.gitlabRelation(settings.gitlabId, organizationId, em)) ?? null,
      bitbucket: (await optionalService(cradle, 'gitProviders')?.bitbucketRelation(settings.bitbucketId, organizationId, em)) ?? null,
      gitea: (await optionalService(cradle, 'gitProviders')?.giteaRelation(settings.giteaId, organizationId, em)) ?? null,
      server: await serverRelation(cradle, row.serverId, organizationId, em),
      // The registries its ids name, as registry.one answers them (never the password).
      registry: await registryRelation(cradle, settings.registryId, organizationId, em),
      buildRegistry: await registryRelation(cradle, settings.buildRegistryId, organizationId, em),
      rollbackRegistry: await registryRelation(cradle, settings.rollbackRegistryId, organizationId, em),
    };
  }

  async one(applicationId: string, organizationId: string, em: EntityManager): Promise<ApplicationView> {
    const found = await this.found(await this.#apps.find(applicationId, organizationId, em), organizationId, em);
    // Every git provider connection of the organization is the caller's to use (sharing is not per user yet).
    return { ...found, hasGitProviderAccess: true, unauthorizedProvider: null };
  }

  /** Deletes the application and everything it left on the host; answers the record as it was, with its relations. */
  async remove(applicationId: string, organizationId: string, em: EntityManager): Promise<ApplicationFound> {
    const row = await this.#apps.find(applicationId, organizationId, em);
    const found = await this.found(row, organizationId, em);
    await this.#cradle().workloads.kind(KIND)!.remove(this.#apps.ref(row), em, { volumes: true });
    return found;
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
export const callerApplications =
  (apps: ApplicationService, pipeline: ApplicationPipeline) =>
  ({ principal, em, workloads }: Cradle) => {
    const organizationId = principal!.organizationId;
    const assertAppNameFree = workloads.placement(organizationId); // a new record's serverId: one of the organization's servers
    const find = (applicationId: string) => apps.find(applicationId, organizationId, em);
    return {
      /** Creates an application in one of the organization's environments. */
      create: (input: CreateInput) => apps.create(input, organizationId, em, assertAppNameFree),
      /** The application with its placement, deployments, mounts and ports. */
      one: (applicationId: string) => pipeline.one(applicationId, organizationId, em),
      /** Applies any subset of the API's fields. */
      change: (applicationId: string, changes: Partial<UpdateInput> & Record<string, unknown>) => apps.change(applicationId, organizationId, changes, em, assertAppNameFree, principal!),
      /** The record with its relations (start, stop and delete answer it). */
      found: async (applicationId: string) => pipeline.found(await find(applicationId), organizationId, em),
      /** Queues a run of the application; answers the queued deployment's id. */
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
