// rollback.*: the kept releases of the caller's organization's applications. Rolling back queues a
// deployment of the application (action rollback) that rolls the release's service out again —
// its image by id, its env and settings — without a build; deleting drops the release and its
// rollback tag. A release of another organization is NOT_FOUND, never FORBIDDEN.
import { conflict, DEPLOYMENT_ID_HEADER, RequestScope } from '@berth/core';
import { Rollback, type RollbackRow } from './entities.ts';
import type { RollbackService } from './service.ts';
import type { RollbackView } from './schemas.ts';

/** Registered asClass(...).scoped() as `rollbackRequests`. */
export class RollbackRequests extends RequestScope {
  get #rollbacks(): RollbackService {
    return this.cradle.rollbacks;
  }

  /** Queues the rollback to the release; answers the release (the deployment's id goes in the response header). */
  async rollback(rollbackId: string, setHeader: (name: string, value: string) => void): Promise<RollbackView> {
    const row = await this.#find(rollbackId);
    const workload = await this.cradle.workloads.owner(row.serviceType, row.serviceId, this.organizationId, this.em);
    const record = await this.cradle.deployments.enqueue(
      {
        targetType: workload.kind,
        targetId: workload.id,
        organizationId: workload.organizationId,
        serverId: workload.serverId,
        action: 'rollback',
        title: `Rollback to v${row.version}`,
        description: `Rolls out release v${row.version} (${row.image}) again, without a build`,
        rollsBack: row.rollbackId,
      },
      this.em,
    );
    setHeader(DEPLOYMENT_ID_HEADER, record.deploymentId);
    return this.#rollbacks.entry(row);
  }

  async one(rollbackId: string): Promise<RollbackView> {
    return this.#rollbacks.entry(await this.#find(rollbackId));
  }

  /** Deletes the release and its rollback tag; answers it as it was. CONFLICT for the release the workload runs now (its service needs the tag). */
  async remove(rollbackId: string): Promise<RollbackView> {
    const row = await this.#find(rollbackId);
    const workload = await this.cradle.workloads.owner(row.serviceType, row.serviceId, this.organizationId, this.em);
    if (await this.#rollbacks.runsNow(row, workload.appName))
      throw conflict(`Release v${row.version} is what ${workload.appName} runs now (a rollback rolled it out): deploy or roll back to another release first`);
    const answer = this.#rollbacks.entry(row);
    await this.#rollbacks.drop(row, this.em);
    return answer;
  }

  #find(rollbackId: string): Promise<RollbackRow> {
    return this.owned(Rollback, { rollbackId }, 'Rollback');
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** From the rollback plugin. */
    rollbacks: RollbackService;
    rollbackRequests: RollbackRequests;
  }
}
