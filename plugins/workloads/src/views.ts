// Where a workload lives (its environment and project), as every kind's `one` shows it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Cradle } from '@berth/core';

export interface Placement {
  environmentId: string;
  name: string;
  projectId: string;
  isDefault: boolean;
  project: { projectId: string; name: string };
}

/** The workload's environment with its project, as `<kind>.one` answers it; NOT_FOUND outside the organization. */
export async function placementOf(cradle: Cradle, environmentId: string, organizationId: string, em: EntityManager): Promise<Placement> {
  const environment = await cradle.environments.get(environmentId, organizationId, em);
  // The project's name is the only field of another plugin's table these reads need.
  const [project] = await em.execute<{ name: string }[]>('select name from projects where project_id = ? and organization_id = ?', [environment.projectId, organizationId]);
  return {
    environmentId: environment.environmentId, name: environment.name, projectId: environment.projectId, isDefault: environment.isDefault,
    project: { projectId: environment.projectId, name: project?.name ?? '' },
  };
}
