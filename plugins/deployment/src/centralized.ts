// deployment.allCentralized: the organization's deployments with what the peer joins to each —
// the application or compose stack (name, appName, icon) with its environment and project,
// and the servers (null: Berth runs everything on this host).
import { Type, type Cradle, type EntityManager, type TSchema, schema } from '@berth/core';
import type { DeploymentView } from './schemas.ts';

const { Nullable } = schema;

const NoServer = Type.Null({ description: 'always null: Berth runs everything on this host (no remote or build servers yet)' });
const Owner = (idField: string) => Nullable(Type.Object({
  [idField]: Type.String(),
  name: Type.String(),
  appName: Type.String(),
  icon: Nullable(Type.String({ description: 'always null: Berth keeps no icons' })),
  environment: Type.Object({ environmentId: Type.String(), name: Type.String(), project: Type.Object({ projectId: Type.String(), name: Type.String() }) }),
  server: NoServer,
  buildServer: NoServer,
}));
/** The owners the peer joins: the kind's wire name, its id field and the relation's name. */
const JOINED = [{ kind: 'application', idField: 'applicationId' }, { kind: 'compose', idField: 'composeId' }];

export const centralizedSchema = (DeploymentView: TSchema) => Type.Array(Type.Object({
  ...(DeploymentView as ReturnType<typeof Type.Object>).properties,
  application: Owner('applicationId'),
  compose: Owner('composeId'),
  server: NoServer,
  buildServer: NoServer,
}));

/** The deployments with their application or compose stack joined (null for other targets or a removed one). */
export async function joinOwners(deployments: DeploymentView[], cradle: Cradle, organizationId: string, em: EntityManager): Promise<Record<string, unknown>[]> {
  const places = new Map<string, Promise<{ environmentId: string; name: string; project: { projectId: string; name: string } }>>();
  const placement = (environmentId: string) => {
    if (!places.has(environmentId)) {
      places.set(environmentId, cradle.environments.placement(environmentId, organizationId, em)
        .then(p => ({ environmentId: p.environmentId, name: p.name, project: { projectId: p.project.projectId, name: p.project.name } })));
    }
    return places.get(environmentId)!;
  };
  const joined = async (d: DeploymentView, kindName: string, idField: string) => {
    const id = (d as Record<string, unknown>)[idField];
    const kind = cradle.workloads.kind(kindName);
    const ref = typeof id === 'string' && kind ? await kind.find(id, em) : null;
    if (!ref || ref.organizationId !== organizationId) return null;
    return { [idField]: ref.id, name: ref.name, appName: ref.appName, icon: null, environment: await placement(ref.environmentId), server: null, buildServer: null };
  };
  return Promise.all(deployments.map(async d => ({
    ...d,
    ...Object.fromEntries(await Promise.all(JOINED.map(async j => [j.kind, await joined(d, j.kind, j.idField)]))),
    server: null,
    buildServer: null,
  })));
}
