// Where a workload lives (its environment and project), as every kind's `one` shows it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Cradle, Placement } from '@berth/core';

export type { Placement };

/** The workload's environment with its project, every field of both (as the peer answers them); NOT_FOUND outside the organization. */
export function placementOf(cradle: Cradle, environmentId: string, organizationId: string, em: EntityManager): Promise<Placement> {
  return cradle.environments.placement(environmentId, organizationId, em);
}
