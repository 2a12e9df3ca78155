// The peer's two overviews of an organization's projects, made from project.all's answer:
// allForPermissions (each project's environments with each workload's id, names, status and
// server, the list a permissions form picks from) and homeStats (how many projects, environments
// and workloads, and how many run, failed or are idle). Both derive the workload lists from the
// environment view, so every registered kind is in them without this file naming one.
import { Type, type EnvironmentView, type Static, type TSchema } from '@berth/core';

/** An object schema, as the environment view's workload lists are. */
type TObject = TSchema & { properties: Record<string, TSchema> };
import type { ProjectView } from './schemas.ts';

/** The fields of a workload the peer's allForPermissions keeps: its id, names, creation, status and server. */
const KEPT = /^(appName|name|createdAt|description|serverId)$|Id$|Status$/;

/**
 * The workload lists of an environment view: its array properties, each with the schema of its
 * entries (a list no kind serves yet, the peer's libsql, has entries of no field: always empty).
 */
function workloadLists(environment: TSchema): [string, TObject][] {
  const properties = ((environment as TObject).properties ?? {}) as Record<string, TSchema>;
  return Object.entries(properties).flatMap(([key, value]) => {
    const items = (value as { type?: string; items?: TObject }).type === 'array' ? (value as { items?: TObject }).items : undefined;
    return items ? [[key, items] as [string, TObject]] : [];
  });
}

/** allForPermissions' answer: projects newest first, each with its environments and their workloads' kept fields. */
export function permissionsView(environment: TSchema) {
  const lists = Object.fromEntries(
    workloadLists(environment).map(([key, item]) => [
      key,
      item.properties?.appName
        ? Type.Array(Type.Object(Object.fromEntries(Object.entries(item.properties).filter(([f]) => KEPT.test(f))) as Record<string, TSchema>))
        : (environment as TObject).properties[key]!,
    ]),
  );
  const Environment = Type.Object({ environmentId: Type.String(), name: Type.String(), isDefault: Type.Boolean(), ...lists });
  return Type.Array(Type.Object({ projectId: Type.String(), name: Type.String(), environments: Type.Array(Environment) }));
}

/** project.all's answer narrowed to allForPermissions' fields. */
export function forPermissions(projects: ProjectView[], environment: TSchema) {
  const keys = workloadLists(environment).map(([key]) => key);
  const keep = (w: Record<string, unknown>) => Object.fromEntries(Object.entries(w).filter(([f]) => KEPT.test(f)));
  return projects.map(p => ({
    projectId: p.projectId,
    name: p.name,
    environments: (p.environments as EnvironmentView[]).map(e => {
      // cast: an environment view lists each kind's workloads under a key its schema derives (additionalProperties).
      const listed = e as unknown as Record<string, Record<string, unknown>[] | undefined>;
      return { environmentId: e.environmentId, name: e.name, isDefault: e.isDefault, ...Object.fromEntries(keys.map(k => [k, (listed[k] ?? []).map(keep)])) };
    }),
  }));
}

export const HomeStats = Type.Object({
  projects: Type.Integer(),
  environments: Type.Integer(),
  applications: Type.Integer(),
  compose: Type.Integer(),
  databases: Type.Integer({ description: 'workloads of the database kinds' }),
  services: Type.Integer({ description: 'applications, compose stacks and databases together' }),
  status: Type.Object(
    { running: Type.Integer(), error: Type.Integer(), idle: Type.Integer() },
    { description: 'running: status done; error: status error; idle: any other (never deployed, stopped, deploying)' },
  ),
});
export type HomeStats = Static<typeof HomeStats>;

/**
 * homeStats' answer from project.all's: `databaseLists` names the environment lists of database
 * kinds; every other workload list counts under its own key (the peer's applications and compose).
 */
export function homeStats(projects: ProjectView[], environment: TSchema, databaseLists: Set<string>): HomeStats {
  const keys = workloadLists(environment).map(([key]) => key);
  const counts: Record<string, number> = {};
  const status = { running: 0, error: 0, idle: 0 };
  let environments = 0;
  let databases = 0;
  for (const e of projects.flatMap(p => p.environments)) {
    environments++;
    for (const key of keys) {
      // cast: as above, the workload lists are keys the environment view's schema derives.
      const listed = ((e as unknown as Record<string, Record<string, unknown>[] | undefined>)[key] ?? []) as Record<string, unknown>[];
      if (databaseLists.has(key)) databases += listed.length;
      else counts[key] = (counts[key] ?? 0) + listed.length;
      for (const w of listed) {
        const state = Object.entries(w).find(([f]) => f.endsWith('Status'))?.[1];
        if (state === 'done') status.running++;
        else if (state === 'error') status.error++;
        else status.idle++;
      }
    }
  }
  const applications = counts.applications ?? 0;
  const compose = counts.compose ?? 0;
  return { projects: projects.length, environments, applications, compose, databases, services: applications + compose + databases, status };
}
