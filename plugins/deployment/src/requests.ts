// deployment.*: the deployments of the caller's organization — a target's, the latest of every
// target, the queue, one, its log, stopping and removing one. Request-scoped: the caller's
// organization and the request's transaction come from the container; another organization's
// deployment is NOT_FOUND, never FORBIDDEN.
import { badRequest, notFound, optionalService, RequestScope, type DeploymentTargetType, type EntityManager, findOwned } from '@berth/core';
import { centralized, queueJobs } from './centralized.ts';
import { Deployment, type DeploymentRow } from './entities.ts';
import { readTail, removeLog } from './log.ts';
import type { RollbackEntry } from '@berth/plugin-workloads';
import type { DeploymentView } from './schemas.ts';
import { newestFirst, type DeploymentStore } from './service.ts';
import { isFinished, toRecord, toView } from './views.ts';

/** Registered asClass(...).scoped() as `deploymentRequests`; workload plugins and the queue use the singleton `deployments`. */
export class DeploymentRequests extends RequestScope {
  get #store(): DeploymentStore {
    return this.cradle.deploymentStore;
  }

  /** The environments directory, when the environment plugin is enabled. */
  readonly #environments = () => optionalService(this.cradle, 'environments');

  /** One deployment. */
  async one(deploymentId: string): Promise<DeploymentView> {
    return this.#view(await this.#find(deploymentId));
  }

  /** The deployments of the workload identified by a kind's id field (deployment.all takes applicationId, allByCompose composeId). */
  async forIdField(idField: string, id: string): Promise<DeploymentView[]> {
    const kind = this.cradle.workloads.kinds().find(k => k.idField === idField);
    if (!kind) throw notFound('Workload');
    return this.forTarget(kind.kind, id);
  }

  /** A target's deployments, newest first, once the target is known to belong to the organization. */
  async forTarget(targetType: DeploymentTargetType, targetId: string): Promise<DeploymentView[]> {
    const { workloads } = this.cradle;
    const organizationId = this.organizationId;
    // A workload's owner is asked of its kind; other targets are judged by the records' organization.
    if (workloads.kind(targetType)) await workloads.owner(targetType, targetId, organizationId, this.em);
    const rows = await this.em.find(Deployment, { targetType, targetId }, { orderBy: newestFirst });
    // Without a resolver, the records say whose target it is.
    if (rows.length && rows.every(r => r.organizationId !== organizationId)) throw notFound(label(targetType));
    return this.#views(rows.filter(r => r.organizationId === organizationId));
  }

  /** The same, each with the release it made when that is kept to roll back to (the rollback plugin's; else null): deployment.allByType. */
  async forTargetWithReleases(targetType: DeploymentTargetType, targetId: string): Promise<(DeploymentView & { rollback: RollbackEntry | null })[]> {
    const views = await this.forTarget(targetType, targetId);
    const releases = await optionalService(this.cradle, 'workloadRollbacks')?.forDeployments(
      views.map(v => v.deploymentId),
      this.organizationId,
      this.em,
    );
    return views.map(v => {
      const rollback = releases?.get(v.deploymentId) ?? null;
      return { ...v, rollbackId: rollback?.rollbackId ?? null, rollback };
    });
  }

  /**
   * The deployments a caller given services one by one may see: those of the services given (the
   * peer narrows allCentralized to the member's accessedServices); everyone else sees the
   * organization's.
   */
  get #visible(): object {
    const services = this.principal.grants.records?.services;
    return services ? { organizationId: this.organizationId, targetId: { $in: [...services] } } : { organizationId: this.organizationId };
  }

  /** The organization's latest deployments, newest first (at most `limit`), each joined with its workload (allCentralized); narrowed to a member's services. */
  async all(limit = 500) {
    const rows = await this.em.find(Deployment, this.#visible, { orderBy: newestFirst, limit });
    return centralized(this.#views(rows), this.cradle, this.#environments, this.organizationId, this.em);
  }

  /** The organization's unfinished deployments as the peer's queue jobs, newest first (queueList); narrowed as allCentralized. */
  async queue() {
    const rows = await this.em.find(Deployment, { ...this.#visible, status: { $in: ['queued', 'running'] } }, { orderBy: newestFirst });
    return queueJobs(this.#views(rows), this.#store.targets(), this.cradle.workloads, this.#environments, this.organizationId, this.em);
  }

  /** The last `tail` lines of a deployment's log. */
  async readLogs(deploymentId: string, tail: number): Promise<string> {
    const row = await this.#find(deploymentId);
    return readTail(row.logPath, tail);
  }

  /** Stops one queued or running deployment; answers it as it ended. */
  async kill(deploymentId: string): Promise<DeploymentView> {
    const row = await this.#find(deploymentId);
    if (isFinished(row.status)) throw badRequest(`Deployment ${deploymentId} is not running: it is ${row.status}`);
    await this.#store.cancel(row, this.em);
    return this.#view(await this.#find(deploymentId, this.em.fork() as EntityManager));
  }

  /** Deletes one finished deployment and its log; answers it as it was. */
  async remove(deploymentId: string): Promise<DeploymentView> {
    const row = await this.#find(deploymentId);
    if (!isFinished(row.status)) throw badRequest(`Deployment ${deploymentId} is ${row.status}: stop it (deployment.killProcess) before removing it`);
    const view = this.#view(row);
    await this.em.nativeDelete(Deployment, { deploymentId, organizationId: this.organizationId });
    await removeLog(row.logPath);
    return view;
  }

  /** The rows as the API answers them; the target fields are worked out once per call. */
  #views(rows: DeploymentRow[]): DeploymentView[] {
    const targets = this.#store.targets();
    return rows.map(r => toView(toRecord(r), targets));
  }

  #view(row: DeploymentRow): DeploymentView {
    return this.#views([row])[0]!;
  }

  /** One of the organization's deployments (NOT_FOUND otherwise), read in `em` (the request's unless told). */
  #find(deploymentId: string, em: EntityManager = this.em): Promise<DeploymentRow> {
    return findOwned(em, Deployment, { deploymentId }, this.organizationId, 'Deployment');
  }
}

const label = (kind: string) => kind.charAt(0).toUpperCase() + kind.slice(1);

declare module '@berth/core' {
  interface Cradle {
    /** deployment.* for the current request's caller (request scope only). */
    deploymentRequests: DeploymentRequests;
  }
}
