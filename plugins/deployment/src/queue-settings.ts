// This machine's share of the deploy queue, as its operators set it through the peer's settings.*:
// how many deployments run here at once (the peer's web-server buildsConcurrency; the dispatcher
// reads it at every claim, queue.ts) and whether workloads may deploy here at all (the peer's
// remoteServersOnly, which Berth enforces before a deployment is queued). Also the peer's
// cleanAllDeploymentQueue: the organization's waiting deployments cancelled.
import { conflict, type EnqueueRequest, type EntityManager } from '@berth/core';
import type { WorkloadRegistry } from '@berth/plugin-workloads';
import { Deployment, QueueSettings, type QueueSettingsRow } from './entities.ts';

/** The key of this machine's row (servers keep their limit in their own record). */
export const THIS_MACHINE = 'this-machine';

export interface QueueSettingsView {
  /** Deployments that run at once on this machine. */
  buildsConcurrency: number;
  /** Whether workloads deploy to servers only. */
  remoteServersOnly: boolean;
}

export class QueueSettingsService {
  readonly #defaultLimit: () => number;
  readonly #workloads: WorkloadRegistry;

  constructor(o: { defaultLimit: () => number; workloads: WorkloadRegistry }) {
    this.#defaultLimit = o.defaultLimit;
    this.#workloads = o.workloads;
  }

  /** What this machine runs with now: the stored settings, else the configuration's deployConcurrency. */
  async current(em: EntityManager): Promise<QueueSettingsView> {
    const row = await em.findOne(QueueSettings, { hostKey: THIS_MACHINE });
    return { buildsConcurrency: row?.buildsConcurrency ?? this.#defaultLimit(), remoteServersOnly: row?.remoteServersOnly ?? false };
  }

  /** This machine's limit, read by the dispatcher at every claim: a change applies to the next deployment that starts. */
  async localLimit(em: EntityManager): Promise<number> {
    return (await this.current(em)).buildsConcurrency;
  }

  async update(patch: Partial<Pick<QueueSettingsRow, 'buildsConcurrency' | 'remoteServersOnly'>>, em: EntityManager): Promise<QueueSettingsView> {
    const row = await em.findOne(QueueSettings, { hostKey: THIS_MACHINE });
    if (row) Object.assign(row, patch);
    else em.create(QueueSettings, { hostKey: THIS_MACHINE, buildsConcurrency: null, remoteServersOnly: false, ...patch });
    await em.flush();
    return this.current(em);
  }

  /** Refuses (CONFLICT) a workload's deployment on this machine while workloads deploy to servers only; host care (cleanups, a server's setup) is not a workload's. */
  async checkEnqueue(request: EnqueueRequest, em: EntityManager): Promise<void> {
    if (request.serverId !== null || !this.#workloads.kind(request.targetType)) return;
    if (!(await this.current(em)).remoteServersOnly) return;
    throw conflict(
      "This instance deploys workloads to servers only (settings.updateRemoteServersOnly): nothing is deployed on Berth's own machine. Give the workload a server (serverId), or have an instance operator turn remoteServersOnly off",
    );
  }

  /** The organization's deployments still waiting their turn, cancelled (running ones go on); answers how many. */
  async cancelQueued(organizationId: string, em: EntityManager): Promise<number> {
    return em.nativeUpdate(Deployment, { organizationId, status: 'queued' }, { status: 'cancelled', finishedAt: new Date() });
  }
}

declare module '@berth/core' {
  interface Cradle {
    /** This machine's share of the deploy queue (its limit, servers only); from the deployment plugin. */
    queueSettings: QueueSettingsService;
  }
}
