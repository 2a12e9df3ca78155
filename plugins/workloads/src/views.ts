// Small pieces every workload plugin (applications, the database kit) needs when it answers
// `one` or deploys: another plugin's service when that plugin is enabled, and where a workload
// lives (its environment and project) as `one` shows it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Cradle } from '@berth/core';

/**
 * A service another plugin provides, or undefined when that plugin is disabled. Only the
 * lookup is guarded: errors of the service's own calls still reach the caller.
 */
export function optionalService<K extends keyof Cradle>(cradle: Cradle, name: K): Cradle[K] | undefined {
  try {
    return cradle[name];
  } catch {
    return undefined;
  }
}

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
