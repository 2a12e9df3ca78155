// application.*: the applications of the caller's organization and what hangs off them, as the API
// sees them — create, read with the deployments, mounts and ports, change, queue a run, cancel,
// clear, delete, search. Request-scoped: the caller's organization and the request's transaction
// come from the container, so handlers pass only their input. The engine work of a run is the
// deployer's (deployer.ts); this file never talks to Docker itself.
import { containing, invalidField, newId, notFound, optionalService, RequestScope, type DeploymentService, type EntityManager, type UploadedFile } from '@berth/core';
import {
  enqueueRun,
  gitRelations,
  joinableNetworks,
  webhookRegistration,
  newRecordColumns,
  newRefreshToken,
  placementOf,
  registryRelation,
  searchFilters,
  serverRelation,
  type AssertAppNameFree,
  type ForgeSource,
} from '@berth/plugin-workloads';
import { Application, type ApplicationRow } from './entities.ts';
import { sealedKeys, type SealedKey } from './fields.ts';
import { KIND, type ApplicationService } from './service.ts';
import { forgeOwnFields, type ApplicationFields, type ApplicationFound, type ApplicationView, type CreateInput, type ReadLogsInput, type SearchInput, type UpdateInput } from './schemas.ts';

const titles: Record<string, string> = { deploy: 'Manual deployment', redeploy: 'Rebuild deployment', reload: 'Reload (restart the service)', start: 'Start the service', stop: 'Stop the service' };

const sealedSet = new Set<string>(sealedKeys);

/** Settings naming another record of the organization, checked on write (the deploy reads them in the record's organization only). */
const REFERENCES = new Set(['customGitSSHKeyId', 'registryId', 'rollbackRegistryId', 'buildRegistryId', 'buildServerId']);

/** Registered asClass(...).scoped() as `applicationRequests`; the deployer, the workload kind and previews use the singleton `applications` service. */
export class ApplicationRequests extends RequestScope {
  get #apps(): ApplicationService {
    return this.cradle.applications;
  }

  get #deployments(): DeploymentService {
    return this.cradle.deployments;
  }

  /** The registry's appName check for the caller's organization: a new record's serverId must be one of the organization's servers. */
  get #assertAppNameFree(): AssertAppNameFree {
    return this.cradle.workloads.placement(this.organizationId);
  }

  /** Creates an application in one of the organization's environments. */
  async create(input: CreateInput): Promise<ApplicationFields> {
    const { environments } = this.cradle;
    const { organizationId, em } = this;
    const columns = await newRecordColumns(input, { environments, organizationId, em, assertAppNameFree: this.#assertAppNameFree });
    const row = this.em.create(Application, {
      applicationId: newId(),
      ...columns,
      sourceType: 'github',
      buildType: 'nixpacks',
      applicationStatus: 'idle',
      refreshToken: newRefreshToken(),
      webhookSecret: null,
      settings: {},
      sealed: this.#apps.seal(Object.fromEntries(sealedKeys.map(k => [k, null])) as Record<SealedKey, string | null>),
      createdAt: new Date(),
    });
    await this.grantCreated('services', row.applicationId);
    await this.em.flush();
    return this.#apps.view(row);
  }

  /** The application with its placement, deployments, mounts and ports, and the source fields of the enabled `forges` the peer does not know (null when unset). */
  async one(applicationId: string, forges: readonly ForgeSource[]): Promise<ApplicationView> {
    const row = await this.#find(applicationId);
    const found = await this.#found(row);
    const settings: Record<string, unknown> = this.#apps.settingsOf(row);
    const forgeOwn = Object.keys(forgeOwnFields(forges)).map(k => [k, settings[k] ?? null]);
    // Every git provider connection of the organization is the caller's to use (sharing is not per user yet).
    return { ...found, ...Object.fromEntries(forgeOwn), hasGitProviderAccess: true, unauthorizedProvider: null };
  }

  /** Applies any subset of the API's fields (update and the save* operations). */
  async change(applicationId: string, changes: Partial<UpdateInput> & Record<string, unknown>): Promise<ApplicationFields> {
    return this.#change(await this.#find(applicationId), changes, this.em);
  }

  /** change, on `row` as read in `em` (the request's unit of work, or a transaction of it). */
  async #change(row: ApplicationRow, changes: Partial<UpdateInput> & Record<string, unknown>, em: EntityManager): Promise<ApplicationFields> {
    const { organizationId } = this;
    const secrets = this.#apps.secretsOf(row);
    await this.#apps.changes.apply(row, changes, { organizationId, em, assertAppNameFree: this.#assertAppNameFree, caller: this.caller }, async (key, value, settings) => {
      if (sealedSet.has(key)) {
        secrets[key as SealedKey] = value as string | null;
        row.sealed = this.#apps.seal(secrets);
        return true;
      }
      // Refused now rather than at the next deploy: another organization's network, one on another host, a bridge (kept in settings after).
      if (key === 'networkIds') await joinableNetworks(this.cradle, value, { organizationId, serverId: row.serverId ?? null }, { field: key, swarm: true }, em);
      if (!REFERENCES.has(key) || typeof value !== 'string' || !value) return false;
      await this.#assertReference(key, value, em);
      settings[key] = value;
      return true;
    });
    return this.#apps.view(row);
  }

  /** The record with its relations (start, stop and delete answer it). */
  async found(applicationId: string): Promise<ApplicationFound> {
    return this.#found(await this.#find(applicationId));
  }

  /** Queues a run of the application; answers the queued deployment's id. */
  async run(applicationId: string, action: string, input: { title?: string; description?: string | null }): Promise<string> {
    return this.#enqueue(await this.#find(applicationId), action, input);
  }

  /**
   * Keeps an uploaded zip archive as the application's source (sourceType drop, the archive's
   * dropBuildPath directory built) and queues its deployment; answers the deployment's id. A
   * refused archive (400 naming `zip`) changes nothing: the source before is kept.
   */
  async drop(applicationId: string, dropBuildPath: string | undefined, archive: UploadedFile): Promise<string> {
    const source = this.cradle.providers.get('source', 'drop');
    // The record's change and the deployment commit together with the archive's swap, which comes
    // last: a change or a queueing that fails never reaches the archive, and a refused archive
    // rolls the record and the queue back. (The deployment is woken at the commit, so it finds the
    // new archive.) No signal is passed: a procedure's context carries none of the request's yet.
    return this.em.transactional(async em => {
      const row = await this.#find(applicationId, em);
      await this.#change(row, { sourceType: 'drop', dropBuildPath: dropBuildPath ?? '' }, em);
      const deploymentId = await this.#enqueue(row, 'deploy', {}, em);
      await source.receive!({ owner: { kind: KIND, id: row.applicationId }, file: archive.path, field: 'zip' });
      return deploymentId;
    });
  }

  /** Queues a restart, once the caller names the application's appName right. */
  async reload(applicationId: string, appName: string): Promise<string> {
    const row = await this.#find(applicationId);
    if (row.appName !== appName) throw invalidField('appName', 'does not match the application');
    return this.#enqueue(row, 'reload', {});
  }

  /** Deletes the application and everything it left on the host; answers the record as it was, with its relations. */
  async remove(applicationId: string): Promise<ApplicationFound> {
    const row = await this.#find(applicationId);
    const found = await this.#found(row);
    await this.cradle.workloads.kind(KIND)!.remove(this.#apps.ref(row), this.em, { volumes: true });
    return found;
  }

  /** Drops the queued deployments. */
  async clearQueue(applicationId: string): Promise<number> {
    return this.#deployments.clearQueueFor(KIND, (await this.#find(applicationId)).applicationId, this.em);
  }

  /** Removes the finished deployments and their logs. */
  async clearDeployments(applicationId: string): Promise<void> {
    await this.#deployments.removeFor(KIND, (await this.#find(applicationId)).applicationId, this.em);
  }

  /** Stops the running deployment and drops the queued ones. */
  async cancel(applicationId: string): Promise<number> {
    return this.#deployments.cancelFor(KIND, (await this.#find(applicationId)).applicationId, this.em);
  }

  /** Applications matching the given texts, paged. */
  async search(input: SearchInput): Promise<{ items: ApplicationFields[]; total: number }> {
    const and = await searchFilters(input, this.organizationId, this.em, { field: 'applicationId', grants: this.principal.grants });
    for (const f of ['repository', 'owner', 'dockerImage'] as const) {
      const v = input[f]?.trim();
      if (v) and.push({ settings: { [f]: { $ilike: containing(v) } } });
    }
    const [rows, total] = await this.em.findAndCount(Application, { $and: and }, { orderBy: { createdAt: 'desc', applicationId: 'asc' }, limit: input.limit ?? 20, offset: input.offset ?? 0 });
    return { items: rows.map(r => this.#apps.view(r, false)), total };
  }

  /** The running service's container output. */
  async readLogs(input: ReadLogsInput): Promise<string> {
    return this.cradle.applicationDeployer.readLogs(await this.#find(input.applicationId), input);
  }

  /** One of the organization's applications (NOT_FOUND otherwise: another organization's is never FORBIDDEN). */
  async #find(applicationId: string, em: EntityManager = this.em): Promise<ApplicationRow> {
    const row = await em.findOne(Application, { applicationId, organizationId: this.organizationId });
    if (!row) throw notFound('Application');
    return row;
  }

  /** The record with its relations, as the peer's findApplicationById answers it (one, delete). */
  async #found(row: ApplicationRow): Promise<ApplicationFound> {
    const { cradle, organizationId, em } = this;
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
      ...(await gitRelations(optionalService(cradle, 'gitProviders'), cradle.providers.ids('git'), settings, organizationId, em)),
      server: await serverRelation(cradle, row.serverId, organizationId, em),
      webhookRegistration: await webhookRegistration(cradle, KIND, applicationId, em),
      // The registries its ids name, as registry.one answers them (never the password).
      registry: await registryRelation(cradle, settings.registryId, organizationId, em),
      buildRegistry: await registryRelation(cradle, settings.buildRegistryId, organizationId, em),
      rollbackRegistry: await registryRelation(cradle, settings.rollbackRegistryId, organizationId, em),
    };
  }

  /** Queues a run of the application; answers the queued deployment's id. */
  #enqueue(row: ApplicationRow, action: string, input: { title?: string; description?: string | null }, em: EntityManager = this.em): Promise<string> {
    return enqueueRun(this.#deployments, this.#apps.ref(row), action, titles, input, em);
  }

  /** Refuses (NOT_FOUND) a setting naming another record (a key, a registry, a build server) that is not one of the organization's. */
  async #assertReference(key: string, id: string, em: EntityManager): Promise<void> {
    if (key === 'customGitSSHKeyId') await optionalService(this.cradle, 'sshKeys')?.one(id, this.organizationId, em);
    else if (key === 'buildServerId') await this.cradle.workloads.assertServer(id, this.organizationId);
    else await optionalService(this.cradle, 'registries')?.one(id, this.organizationId, em);
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** application.* for the current request's caller (request scope only). */
    applicationRequests: ApplicationRequests;
  }
}
